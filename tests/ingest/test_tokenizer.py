"""Which tokenizer sizes chunks: the one of the embedding model the settings name."""

import pytest
from tokenizers import Tokenizer, models, pre_tokenizers

from scholargraph import KnowledgeBase
from scholargraph.errors import ConfigError

TEXT = "Retrieval-augmented generation grounds hallucination-prone models"


@pytest.fixture
def word_model(tmp_path):
    """A local model directory whose tokenizer makes one token per whitespace-separated word."""
    folder = tmp_path / "word-model"
    folder.mkdir()
    tok = Tokenizer(models.WordLevel({"[UNK]": 0}, unk_token="[UNK]"))
    tok.pre_tokenizer = pre_tokenizers.WhitespaceSplit()
    tok.save(str(folder / "tokenizer.json"))
    return folder


def test_the_embedding_models_own_tokenizer_sizes_chunks(workdir, word_model):
    # the tokenizer was always MiniLM's whatever embeddings.model said
    with KnowledgeBase(workdir, embeddings={"model": str(word_model)}) as kb:
        assert kb.tokenizer.count(TEXT) == 5 and kb.tokenizer.name == "embedding:word-model"
    with KnowledgeBase(workdir) as kb:
        assert kb.tokenizer.count(TEXT) > 5 and kb.tokenizer.name == "embedding"


def test_a_model_directory_without_a_tokenizer_is_a_clear_error(workdir, tmp_path):
    (tmp_path / "bare").mkdir()
    with KnowledgeBase(workdir, embeddings={"model": str(tmp_path / "bare")}) as kb, \
            pytest.raises(ConfigError, match="no tokenizer.json.*chunking.tokenizer"):
        kb.tokenizer.count(TEXT)


def test_a_remote_embedding_model_falls_back_to_minilms_tokenizer(workdir):
    embeddings = {"provider": "openai", "model": "nomic-embed-text", "base_url": "http://127.0.0.1:9/v1", "dimension": 8}
    with KnowledgeBase(workdir, embeddings=embeddings) as kb:
        assert kb.tokenizer.name == "embedding" and kb.tokenizer.count(TEXT) > 5
