"""The one stopword source of the project.

* :data:`STOPWORDS` -- English function words plus academic connectives ("however", "et", "al")
  and number words. Content nouns such as "method" or "approach" are deliberately *not*
  stopwords; extractors keep their own lists of generic words.
* :data:`QUESTION_WORDS` -- words that carry a question's grammar rather than its content
  ("How does X affect Y?", "which genes are associated with..."): query parsers drop them on top
  of :data:`STOPWORDS`.
"""

from __future__ import annotations

__all__ = ["QUESTION_WORDS", "STOPWORDS"]


STOPWORDS: frozenset[str] = frozenset(
    """
    a about above across after afterwards again against all almost alone along already also although always
    am among amongst an and another any anybody anyhow anyone anything anyway anywhere are around as at
    be became because become becomes becoming been before beforehand behind being below beside besides
    between beyond both but by can cannot could did do does doing done down during each either else
    elsewhere enough etc even ever every everyone everything everywhere except few for former formerly
    from further furthermore had has have having he hence her here hereafter hereby herein hers herself
    him himself his how however i if in indeed inside instead into is it its itself just least less
    let like likewise may me meanwhile might mine more moreover most mostly much must my myself namely
    neither never nevertheless next no nobody none nonetheless noone nor not nothing now nowhere of off
    often on once one only onto or other others otherwise our ours ourselves out over own per perhaps
    quite rather really regarding same seem seemed seeming seems several she should since so some
    somebody somehow someone something sometime sometimes somewhat somewhere still such than that the
    their theirs them themselves then thence there thereafter thereby therefore therein thereof
    thereupon these they this those though through throughout thru thus to together too toward towards
    under unless unlike until up upon us very via was we well were what whatever when whence whenever
    where whereafter whereas whereby wherein whereupon wherever whether which while whither who whoever
    whole whom whose why will with within without would yet you your yours yourself yourselves
    shall should ought cannot can't won't don't doesn't isn't aren't wasn't weren't
    et al eg ie cf vs viz ca approx resp respectively i.e e.g
    two three four five six seven eight nine ten eleven twelve twenty thirty forty fifty sixty seventy eighty
    ninety hundred thousand million billion dozen fewer
    additionally consequently finally firstly secondly thirdly lastly accordingly specifically
    particularly especially notably importantly interestingly surprisingly similarly conversely
    alternatively subsequently previously recently currently typically generally usually commonly
    widely largely mainly primarily essentially simply merely clearly obviously significantly
    due versus whilst amid far later earlier else ago away
    """.split()
)

QUESTION_WORDS: frozenset[str] = frozenset(
    """
    use used uses using does do did done compare compared comparing comparison differ differs difference
    differences explain explained describe described affect affects affected influence influences improve
    improves improved work works role roles relationship relationships relate relates related relation mean
    means meaning main key best known find list give tell show shows shown help helps make makes play plays
    paper papers study studies research researchers article articles author authors literature propose proposed
    according based kind kinds type types way ways example examples effect effects impact impacts lead leads
    include includes including involve involves involved associated association exist exists existing
    current recent new possible potential important common good better link links linked linking connect
    connects connected connection connections cause causes contribute contributes please
    """.split()
)
