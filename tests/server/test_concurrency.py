"""Many readers while one job indexes: reads are answered during the run, not after it."""

from concurrent.futures import ThreadPoolExecutor

from server_helpers import client, upload
from support.canned import default_rules

from scholargraph.testing.llm_server import ScriptedLLMServer

TOPICS = ["GraphRAG", "LightRAG", "HippoRAG", "PaperQA", "SciBERT", "SPECTER", "BioBERT", "PubMedBERT", "ColBERT",
          "Contriever", "DensePassage", "Atlas"]


def paper(i: int, topic: str) -> tuple[str, bytes, str]:
    text = (f"# {topic} Study {i}\n\n## Introduction\n{topic} Retrieval uses a Knowledge Graph. "
            f"{topic} Encoders embed Passages for Question Answering.\n")
    return (f"p{i}.md", text.encode(), "text/markdown")


def test_reads_are_served_while_a_job_indexes(servers, tmp_path):
    with ScriptedLLMServer(rules=default_rules(), latency=0.5) as llm:
        server = servers(tmp_path / "ws", llm.base_url, llm={"max_concurrency": 2})
        with client(server) as http:
            seed = upload(http, paper(99, "Seed"))  # something to read while the next job runs
            assert seed.json()["job"]["status"] == "done"
            job = upload(http, *[paper(i, t) for i, t in enumerate(TOPICS)], wait=0).json()["job"]

            def read(i: int) -> tuple[int, str]:
                kind = i % 4
                if kind == 0:
                    response = http.get("/api/documents")
                elif kind == 1:
                    response = http.get("/api/stats")
                elif kind == 2:
                    response = http.post("/api/retrieve", json={"question": "Knowledge Graph retrieval", "mode": "naive"})
                else:
                    response = http.get("/api/entities", params={"search": "Seed"})
                return response.status_code, http.get(f"/api/jobs/{job['id']}").json()["job"]["status"]

            with ThreadPoolExecutor(8) as pool:
                results = list(pool.map(read, range(40)))
            final = http.get(f"/api/jobs/{job['id']}?wait=120").json()["job"]
            documents = http.get("/api/documents").json()["documents"]
    assert all(status == 200 for status, _ in results)
    # every read finished while the job was still indexing
    assert {job_status for _, job_status in results} <= {"queued", "running"}
    assert final["status"] == "done" and len(final["result"]["processed"]) == len(TOPICS)
    assert sum(d["status"] == "PROCESSED" for d in documents) == len(TOPICS) + 1
