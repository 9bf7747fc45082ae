"""The GLiNER stage's real code path, with a tiny GLiNER built here from a config.

Nothing is downloaded: a BERT-shaped backbone of one small layer and a WordPiece
tokenizer trained on a few sentences are saved to a temp folder, a GLiNER with random
weights is built on them and saved, and the store loads it from that folder. The
weights are random, so this checks plumbing (spans come back as entities linked to the
memory, and status says the stage is live), not quality.
"""

from __future__ import annotations

import warnings
from pathlib import Path

import pytest

from aide_memoire import Memory, Settings

# Not skipped when missing: `make setup` installs gliner for this test (see Makefile).


def _build_model(folder: Path) -> Path:
    import torch
    from gliner import GLiNER, GLiNERConfig
    from tokenizers import Tokenizer, models, normalizers, pre_tokenizers, processors, trainers
    from transformers import BertConfig, PreTrainedTokenizerFast

    torch.manual_seed(0)
    backbone = folder / "backbone"
    backbone.mkdir(parents=True)
    tok = Tokenizer(models.WordPiece(unk_token="[UNK]"))
    tok.normalizer = normalizers.BertNormalizer(lowercase=True)
    tok.pre_tokenizer = pre_tokenizers.BertPreTokenizer()
    specials = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]"]
    corpus = ["Alice works at Acme in Berlin.", "Bob joined Globex in Paris.",
              "person organization location product event"] * 5
    tok.train_from_iterator(corpus, trainers.WordPieceTrainer(vocab_size=300,
                                                              special_tokens=specials))
    tok.post_processor = processors.TemplateProcessing(
        single="[CLS] $A [SEP]", pair="[CLS] $A [SEP] $B [SEP]",
        special_tokens=[("[CLS]", tok.token_to_id("[CLS]")), ("[SEP]", tok.token_to_id("[SEP]"))],
    )
    fast = PreTrainedTokenizerFast(  # type: ignore[no-untyped-call]
        tokenizer_object=tok, unk_token="[UNK]", pad_token="[PAD]",
                                   cls_token="[CLS]", sep_token="[SEP]", mask_token="[MASK]")
    fast.save_pretrained(backbone)
    BertConfig(vocab_size=fast.vocab_size, hidden_size=32, num_hidden_layers=1,
               num_attention_heads=2, intermediate_size=64).save_pretrained(backbone)
    config = GLiNERConfig(model_name=str(backbone), hidden_size=32, max_width=4,
                          span_mode="markerV0", max_len=64)
    model = GLiNER.from_config(config, backbone_from_pretrained=False, local_files_only=True)
    model.save_pretrained(folder / "model")
    return folder / "model"


@pytest.fixture(scope="module")
def gliner_model(tmp_path_factory: pytest.TempPathFactory) -> Path:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return _build_model(tmp_path_factory.mktemp("gliner"))


def test_gliner_spans_become_entities_of_the_memory(gliner_model: Path, tmp_path: Path) -> None:
    settings = Settings(home=tmp_path, embedding_model="none", gliner_model=str(gliner_model))
    with Memory(settings=settings) as memory:
        stage = next(s for s in memory.status().stages if s.name == "extraction")
        assert stage.live and "GLiNER" in stage.detail and str(gliner_model) in stage.detail
        gliner = memory.internals.services.facts.gliner
        assert gliner is not None
        gliner.threshold = 0.0  # random weights score near 0.5: take every span
        memory_id = memory.store("alice works at acme in berlin", namespace="n")
        rows = memory.internals.db.conn().execute(
            "SELECT e.name, me.source FROM memory_entities me JOIN entities e "
            "ON e.id = me.entity_id JOIN memories m ON m.rowid = me.memory_rowid "
            "WHERE m.id = ?", (memory_id,),
        ).fetchall()
    spans = [name for name, source in rows if source == "gliner"]
    assert spans, rows
    assert all(name in "alice works at acme in berlin" for name in spans)
