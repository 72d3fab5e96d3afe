#!/usr/bin/env python3
"""Reference scores from NVIDIA NeMo Safe Synthesizer's (NSS) own evaluator.

Golden fixtures for nss_evaluate (the C++ reimplementation of NSS's SQS
quality score and DPS privacy score). Runs in the separate venv that
scripts/make_evaluation_fixtures.sh builds (nemo-safe-synthesizer 0.1.16
installed with --no-deps plus the pinned packages its evaluation modules
import); never part of scripts/setup.sh or the test command.

  evaluation_reference.py --out tests/fixtures/evaluation
      writes, for each table (four scikit-learn ones, the generated `mixed`
      and `text`) and synthetic variant,
      TABLE/VARIANT/{train,holdout,synthetic}.csv and scores.json, and
      versions.json at the top; per-table timings go to stderr only.
  evaluation_reference.py --time N [--time-table T] [--write DIR]
      times the evaluator on the first N rows (train, holdout and synthetic
      N rows each) of a 3 x 5,000-row table made by resampling a scikit-learn
      table with noise; prints seconds (total and per component), writes
      nothing unless --write DIR (then the three CSVs it timed, so another
      implementation can be timed on identical input).

Entry point: MultimodalReport.from_dataframes(training, synthetic, test,
config=SafeSynthesizerParameters()) -- exactly the call NSS's
evaluation.evaluator.Evaluator.evaluate makes (evaluator.py itself is not
imported: it pulls in cli/ and generation/, which import transformers).
Score names come from NSS's results._REPORT_SCORE_FIELDS, read from its source
with ast (results.py also imports generation/, hence transformers).

Stubs (the only ones; unavoidable without installing torch and
sentence-transformers, which would bring transformers and huggingface-hub<1
conflicts back): four NSS evaluation modules import two heavy packages at
module level --
  evaluation/nearest_neighbors.py                     import torch
  evaluation/components/privacy_metric_utils.py       import torch
  evaluation/components/membership_inference_protection.py
  evaluation/components/attribute_inference_protection.py
                                                      import torch;
                      from sentence_transformers import SentenceTransformer, util
On tabular data (no column NSS classifies as text) the only torch call on the
evaluation path is torch.cuda.is_available() in
NearestNeighborSearch._detect_device, and sentence_transformers is used only
for text columns. So while NSS's modules
import, sys.modules holds a stub `torch` whose cuda.is_available() returns
False (NSS then takes its own CPU path, sklearn NearestNeighbors brute-force
euclidean -- the same path NSS takes on any machine without a GPU) and whose
Tensor is an empty class (so scipy/sklearn's array-API checks, which look up
sys.modules["torch"].Tensor, find nothing is a tensor), and a stub
`sentence_transformers` whose SentenceTransformer raises and whose util has
nothing. Both stubs are removed from sys.modules once NSS is imported; any
other torch attribute raises AttributeError, so an unexpected use fails
loudly instead of changing a score. If real torch/sentence_transformers are
importable they are used instead (versions.json records which).

Text columns (the `text` table): only what needs the embedding model meets
the stub, and NSS reports it as it does on a machine without the model.
Membership and attribute inference call the stub SentenceTransformer, which
raises; NSS catches it and scores them Unavailable (its message as notes), so
the DPS is Unavailable. Text semantic similarity imports
sentence_transformers at run time, after the stub is gone: the import fails,
NSS's loader returns None and the score is Unavailable. Text structure
similarity needs no model and runs unstubbed. A table with text columns is
refused when the real sentence_transformers is importable, so these fixtures
always record NSS without its model (what nss_evaluate reproduces).

PYTHONHASHSEED: NSS orders the evaluated columns by iterating a Python set of
column names (EvaluationDatasets.subsample_columns: list(set)), and the
attribute-inference attack's quasi-identifier combinations follow that order,
so the scores depend on string hashing. This script re-executes itself with
PYTHONHASHSEED=0 when it is not already set to 0.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import importlib.metadata
import importlib.util
import json
import math
import os
import platform
import shutil
import sys
import time
import types
import unicodedata
from pathlib import Path

HASH_SEED = "0"
if os.environ.get("PYTHONHASHSEED") != HASH_SEED:
    os.environ["PYTHONHASHSEED"] = HASH_SEED
    os.execv(sys.executable, [sys.executable, *sys.argv])

import warnings  # noqa: E402

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

NSS_VERSION = "0.1.16"
SPLIT_SEED = 20260101  # numpy PCG64 seed for the row split and the column shuffle
TABLES = ("iris", "wine", "breast_cancer", "diabetes", "mixed", "text")
VARIANTS = ("independent", "memorised", "shuffled")


# --------------------------------------------------------------------------- stubs
def _make_torch_stub() -> types.ModuleType:
    mod = types.ModuleType("torch")
    mod.__doc__ = "evaluation_reference.py stub: only cuda.is_available() (False) and an empty Tensor class"

    class _Cuda:
        @staticmethod
        def is_available() -> bool:
            return False

    class Tensor:  # never instantiated; issubclass(x, Tensor) is False for everything real
        pass

    mod.cuda = _Cuda()
    mod.Tensor = Tensor
    return mod


def _make_sentence_transformers_stub() -> types.ModuleType:
    mod = types.ModuleType("sentence_transformers")

    class SentenceTransformer:
        def __init__(self, *args, **kwargs):
            raise RuntimeError(
                "sentence_transformers is stubbed by evaluation_reference.py: no sentence-embedding model"
            )

    mod.SentenceTransformer = SentenceTransformer
    mod.util = types.ModuleType("sentence_transformers.util")
    return mod


STUBBED: list[str] = []


@contextlib.contextmanager
def _heavy_import_stubs():
    added = []
    for name, factory in (("torch", _make_torch_stub), ("sentence_transformers", _make_sentence_transformers_stub)):
        if name not in sys.modules and importlib.util.find_spec(name) is None:
            sys.modules[name] = factory()
            added.append(name)
    STUBBED[:] = added
    try:
        yield
    finally:
        for name in added:
            sys.modules.pop(name, None)


with _heavy_import_stubs(), warnings.catch_warnings():
    warnings.simplefilter("ignore")
    import nemo_safe_synthesizer
    from nemo_safe_synthesizer.artifacts.analyzers.field_features import FieldType
    from nemo_safe_synthesizer.config.parameters import SafeSynthesizerParameters
    from nemo_safe_synthesizer.evaluation.components.attribute_inference_protection import (
        AttributeInferenceProtection,
    )
    from nemo_safe_synthesizer.evaluation.components.column_distribution import ColumnDistribution
    from nemo_safe_synthesizer.evaluation.components.correlation import Correlation
    from nemo_safe_synthesizer.evaluation.components.data_privacy_score import DataPrivacyScore
    from nemo_safe_synthesizer.evaluation.components.dataset_statistics import DatasetStatistics
    from nemo_safe_synthesizer.evaluation.components.deep_structure import DeepStructure
    from nemo_safe_synthesizer.evaluation.components.membership_inference_protection import (
        MembershipInferenceProtection,
    )
    from nemo_safe_synthesizer.evaluation.components.pii_replay import PIIReplay
    from nemo_safe_synthesizer.evaluation.components.sqs_score import SQSScore
    from nemo_safe_synthesizer.evaluation.components.text_semantic_similarity import TextSemanticSimilarity
    from nemo_safe_synthesizer.evaluation.components.text_structure_similarity import TextStructureSimilarity
    from nemo_safe_synthesizer.evaluation.data_model.evaluation_datasets import EvaluationDatasets
    from nemo_safe_synthesizer.evaluation.data_model.evaluation_field import EvaluationField
    from nemo_safe_synthesizer.evaluation.reports.multimodal.multimodal_report import MultimodalReport

if nemo_safe_synthesizer.__version__ != NSS_VERSION:
    sys.exit(f"expected nemo-safe-synthesizer {NSS_VERSION}, found {nemo_safe_synthesizer.__version__}")


def _report_score_fields() -> dict[str, str]:
    """NSS's SafeSynthesizerSummary field name -> report component name (results._REPORT_SCORE_FIELDS)."""
    src = Path(nemo_safe_synthesizer.__file__).with_name("results.py").read_text()
    for node in ast.parse(src).body:
        target = getattr(node, "target", None) or (getattr(node, "targets", None) or [None])[0]
        if isinstance(target, ast.Name) and target.id == "_REPORT_SCORE_FIELDS":
            return ast.literal_eval(node.value)
    raise RuntimeError("_REPORT_SCORE_FIELDS not found in nemo_safe_synthesizer/results.py")


REPORT_SCORE_FIELDS = _report_score_fields()


# ----------------------------------------------------------------- timing wrappers
# Wrapping the components' class-level constructors only records wall time;
# arguments and results pass through untouched.
TIMINGS: dict[str, float] = {}


def _wrap_timed(cls, attr: str, label: str) -> None:
    orig = getattr(cls, attr)

    def timed(*args, **kwargs):
        t0 = time.perf_counter()
        try:
            return orig(*args, **kwargs)
        finally:
            TIMINGS[label] = TIMINGS.get(label, 0.0) + time.perf_counter() - t0

    setattr(cls, attr, staticmethod(timed))


for _cls, _attr, _label in (
    (EvaluationDatasets, "from_dataframes", "datasets (field features, distributions, exact matches)"),
    (AttributeInferenceProtection, "from_evaluation_datasets", "attribute_inference_protection"),
    (MembershipInferenceProtection, "from_evaluation_datasets", "membership_inference_protection"),
    (Correlation, "from_evaluation_datasets", "column_correlation_stability"),
    (DeepStructure, "from_evaluation_datasets", "deep_structure_stability"),
    (TextSemanticSimilarity, "from_evaluation_datasets", "text_semantic_similarity"),
    (TextStructureSimilarity, "from_evaluation_datasets", "text_structure_similarity"),
):
    _wrap_timed(_cls, _attr, _label)


# ----------------------------------------------------------------------- the data
def mixed_table(rows: int = 900) -> pd.DataFrame:
    """A generated table of the kinds of columns the scikit-learn tables lack
    (PCG64(SPLIT_SEED + 3)): a unique id and a zip code (NSS's name rule), text
    categories with missing cells, bool, yes/no with missing cells, integers
    with missing cells (float to pandas), a small integer category, a
    high-cardinality and an all-unique text column, a constant; income
    depends on the segment and visits on age, so the correlations mean
    something."""
    rng = np.random.default_rng(SPLIT_SEED + 3)
    segment = rng.choice(["retail", "gold", "student", "business", "senior"], rows)
    age = rng.integers(18, 90, rows).astype(float)
    income = np.round(rng.normal(30, 8, rows) + np.where(segment == "gold", 40.0, 0.0) +
                      np.where(segment == "business", 25.0, 0.0), 3)
    df = pd.DataFrame({
        "customer_id": rng.permutation(np.arange(100000, 100000 + rows)),
        "zip_code": rng.choice(np.arange(10000, 10030), rows),
        "segment": segment.astype(object),
        "member": rng.random(rows) < 0.4,
        "active": rng.choice(["yes", "no"], rows).astype(object),
        "age": age,
        "income": income,
        "visits": np.clip(np.round(age / 15 + rng.normal(0, 1, rows)), 0, 6).astype(int),
        "city": np.array(["city%02d" % i for i in rng.integers(0, 60, rows)], dtype=object),
        "note_code": np.array(["N%05d" % i for i in rng.permutation(rows)], dtype=object),
        "constant": "x",
    })
    df.loc[rng.random(rows) < 0.1, "segment"] = np.nan
    df.loc[rng.random(rows) < 0.15, "active"] = np.nan
    df.loc[rng.random(rows) < 0.05, "age"] = np.nan
    return df


# Words for text_table: short and long ones (a record's share of long words
# sets its characters per word), a few with letters beyond ASCII, an
# apostrophe or a hyphen (each splits into two \w+ words), "m²" ("²" is an
# other-number, category No, and \w: one word of two characters).
SHORT_WORDS = (
    "a an as at be by do go he if in is it me my no of ok on or so to up us we "
    "box fit red bag cup lid fan key mat set top arm ear pad day way new old hot "
    "cold fast slow easy good nice fine soft loud item size tone feel look work "
    "café déjà vu naïve don't it's well-made m²"
).split()
LONG_WORDS = (
    "adjustable comfortable disappointing instructions replacement manufacturer "
    "recommendation surprisingly unfortunately compatibility battery packaging "
    "lightweight customer delivery excellent overpriced stitching noticeable "
    "frustrating durability über-quiet jalapeño-red crème façade"
).split()
# Hindi: vowel signs and viramas are combining marks (Mn/Mc), not \w, so
# they split NSS's words; "।" (danda) ends a sentence.
HINDI_WORDS = (
    "यह उत्पाद बहुत अच्छा है कीमत ठीक नहीं मुझे पसंद आया डिलीवरी जल्दी हुई "
    "गुणवत्ता खराब बैटरी लंबी चलती और लेकिन"
).split()
# French: a no-break space (U+00A0) before "!" and "?"; Python's strip()
# removes it, so the run between "?" and "!" in "?\u00a0!" is no sentence.
FRENCH_WORDS = (
    "très bien produit qualité prix livraison rapide déçu vraiment pas cher un le "
    "la et mais c'est l'emballage trop petit je recommande"
).split()
# Sentence endings NSS's sentence regex splits on, with their weights; "?!"
# and "!!" end once (the empty run between them is no sentence).
ENGLISH_ENDS = ((".", 0.6), ("!", 0.15), ("?", 0.1), ("…", 0.05), ("?!", 0.05), ("!!", 0.05))
HINDI_ENDS = (("।", 0.8), ("?", 0.2))
FRENCH_ENDS = ((".", 0.5), ("\u00a0!", 0.2), ("\u00a0?", 0.15), ("\u00a0?\u00a0!", 0.15))
LANGUAGES = {
    "english": (SHORT_WORDS, LONG_WORDS, ENGLISH_ENDS),
    "hindi": (HINDI_WORDS, HINDI_WORDS, HINDI_ENDS),
    "french": (FRENCH_WORDS, FRENCH_WORDS, FRENCH_ENDS),
}


def _sentence(rng: np.random.Generator, words: int, long_share: float, language: str = "english") -> str:
    """One generated sentence: `words` words, sometimes a decimal ("4.5"), a
    time ("7:30") or "e.g." inside (each splits NSS's sentence in two), a
    fraction ("2½", one \\w+ word), a comma, a capital first letter and one of
    the language's endings."""
    short, long, ends = LANGUAGES[language]
    out = []
    for _ in range(words):
        pool = long if rng.random() < long_share else short
        out.append(pool[rng.integers(len(pool))])
    extra = rng.random()
    at = int(rng.integers(len(out) + 1))
    if extra < 0.06:
        out.insert(at, f"{rng.integers(1, 5)}.{rng.integers(0, 10)}")
    elif extra < 0.1:
        out.insert(at, f"{rng.integers(6, 12)}:{rng.integers(0, 6)}0")
    elif extra < 0.13:
        out.insert(at, "e.g.")
    elif extra < 0.16:
        out.insert(at, f"{rng.integers(1, 4)}½")
    if len(out) > 4 and rng.random() < 0.3:
        out[int(rng.integers(1, len(out) - 1))] += ","
    text = " ".join(out)
    end = ends[rng.choice(len(ends), p=[w for _, w in ends])][0]
    return text[:1].upper() + text[1:] + end


def _paragraph(rng: np.random.Generator, sentences: int, words: float, long_share: float, language: str) -> str:
    return " ".join(_sentence(rng, 1 + int(rng.poisson(words)), long_share, language) for _ in range(sentences))


def _agent_note(rng: np.random.Generator, kind: float):
    """About 10% missing, 3% with no word at all, otherwise 1-3 sentences, some
    starting "Note:", some over two lines (a quoted newline in the CSV), some
    decomposed (NFD: an accent is a combining mark of its own, not \\w)."""
    if kind < 0.1:
        return np.nan
    if kind < 0.13:
        return "— … —"
    note = _paragraph(rng, 1 + int(rng.integers(0, 3)), rng.uniform(2.0, 6.0), rng.uniform(0.1, 0.4), "english")
    if kind < 0.25:
        note = "Note: " + note
    elif kind < 0.33:
        note = note + "\n" + _sentence(rng, 3 + int(rng.poisson(2.0)), 0.2)
    elif kind < 0.45:
        note = unicodedata.normalize("NFD", note)
    return note


def text_table(rows: int = 360) -> pd.DataFrame:
    """A generated table with two free-text columns (PCG64(SPLIT_SEED + 4)):
    `review`, 1-6 sentences, more the further the rating is from 3, mostly
    English, about 8% Hindi and 8% French (see the word lists), and
    `agent_note` (_agent_note). Each record draws its own words per sentence
    and share of long words, so the per-record statistics vary. Beside them a
    category, an integer rating 1-5, a price and a vote count."""
    rng = np.random.default_rng(SPLIT_SEED + 4)
    product = rng.choice(["headphones", "backpack", "kettle", "lamp", "keyboard", "blender"], rows)
    rating = rng.integers(1, 6, rows)
    price = np.round(rng.gamma(2.0, 15.0, rows) + 5.0, 2)
    votes = rng.poisson(4.0, rows)
    reviews, notes = [], []
    for r in range(rows):
        count = int(np.clip(1 + rng.poisson(0.5 + 0.75 * abs(3 - rating[r])), 1, 6))
        pick = rng.random()
        language = "hindi" if pick < 0.08 else "french" if pick < 0.16 else "english"
        reviews.append(_paragraph(rng, count, rng.uniform(1.0, 8.0), rng.uniform(0.05, 0.6), language))
        notes.append(_agent_note(rng, rng.random()))
    return pd.DataFrame({
        "product": product.astype(object),
        "rating": rating,
        "price": price,
        "helpful_votes": votes,
        "review": np.array(reviews, dtype=object),
        "agent_note": np.array(notes, dtype=object),
    })


def load_table(name: str) -> pd.DataFrame:
    """A scikit-learn bundled table as a DataFrame with the target as column
    `target`, or the generated mixed or text table."""
    from sklearn import datasets

    if name == "mixed":
        return mixed_table()
    if name == "text":
        return text_table()

    loader = {
        "iris": datasets.load_iris,
        "wine": datasets.load_wine,
        "breast_cancer": datasets.load_breast_cancer,
        "diabetes": datasets.load_diabetes,
    }[name]
    return loader(as_frame=True).frame.reset_index(drop=True)


def make_case(name: str) -> dict:
    """Deterministic split of one table: train, holdout, and the three synthetic variants.

    Rows are permuted with numpy PCG64(SPLIT_SEED); n = rows // 3; train is
    the permuted rows [0, n), holdout [n, 2n), and the `independent`
    synthetic table [2n, 3n) (the 0-2 rows past 3n are unused). `memorised`
    is train itself; `shuffled` is train with each column, left to right,
    permuted by successive permutation(n) draws of PCG64(SPLIT_SEED + 1).
    All three parts have n rows, so NSS subsamples nothing (it would cut
    training and synthetic to the smaller of the two).
    """
    df = load_table(name)
    n = len(df) // 3
    perm = np.random.default_rng(SPLIT_SEED).permutation(len(df))
    parts = {"train": perm[:n], "holdout": perm[n : 2 * n], "independent": perm[2 * n : 3 * n]}
    train = df.iloc[parts["train"]].reset_index(drop=True)
    holdout = df.iloc[parts["holdout"]].reset_index(drop=True)
    rng = np.random.default_rng(SPLIT_SEED + 1)
    shuffled = pd.DataFrame({c: train[c].to_numpy()[rng.permutation(n)] for c in train.columns})
    synthetic = {
        "independent": df.iloc[parts["independent"]].reset_index(drop=True),
        "memorised": train.copy(),
        "shuffled": shuffled,
    }
    source_rows = {k: [int(i) for i in v] for k, v in parts.items()}
    return {"train": train, "holdout": holdout, "synthetic": synthetic, "source_rows": source_rows}


def timing_tables(table: str, rows: int = 5000, noise: float = 0.05) -> tuple[pd.DataFrame, ...]:
    """Three `rows`-row tables (train, holdout, synthetic) resampled from a scikit-learn table.

    Each is `rows` draws with replacement (PCG64(SPLIT_SEED + 2), in that
    order), float feature columns plus Gaussian noise of `noise` x the
    column's standard deviation, clipped to the column's range, rounded to 6
    significant digits; the target column is kept as is.
    """
    df = load_table(table)
    rng = np.random.default_rng(SPLIT_SEED + 2)
    out = []
    for _ in range(3):
        t = df.iloc[rng.integers(0, len(df), rows)].reset_index(drop=True)
        for c in t.columns:
            if c != "target" and pd.api.types.is_float_dtype(t[c]):
                noisy = t[c].to_numpy() + rng.normal(0.0, noise * df[c].std(), rows)
                noisy = np.clip(noisy, df[c].min(), df[c].max())
                t[c] = [float(f"{v:.6g}") for v in noisy]
        out.append(t)
    return tuple(out)


# ------------------------------------------------------------------- evaluation
def evaluate(train: pd.DataFrame, holdout: pd.DataFrame, synthetic: pd.DataFrame) -> MultimodalReport:
    """What Evaluator.evaluate does (generate_results given as a DataFrame, no PII replacer)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return MultimodalReport.from_dataframes(
            training=train,
            synthetic=synthetic,
            test=holdout,
            config=SafeSynthesizerParameters(),
            column_statistics=None,
        )


def _clean(x):
    """JSON-safe copy: numpy scalars to Python, NaN/inf to None, keys to str."""
    if isinstance(x, dict):
        return {str(k): _clean(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_clean(v) for v in x]
    if isinstance(x, np.ndarray):
        return [_clean(v) for v in x.tolist()]
    if isinstance(x, (np.bool_, bool)):
        return bool(x)
    if isinstance(x, (np.integer,)):
        return int(x)
    if isinstance(x, (float, np.floating)):
        x = float(x)
        return x if math.isfinite(x) else None
    return x


def _score(component) -> dict:
    return component.score.model_dump(mode="json")


def _matrix(df: pd.DataFrame | None) -> dict | None:
    if df is None:
        return None
    return {"columns": [str(c) for c in df.columns], "values": df.to_numpy(dtype=float).tolist()}


def _field(f: EvaluationField) -> dict:
    def features(ff):
        d = ff.model_dump(mode="json")
        d.pop("unique_values_list", None)
        d.pop("classification", None)
        return d

    return {
        "name": f.name,
        "training_field_features": features(f.training_field_features),
        "synthetic_field_features": features(f.synthetic_field_features),
        "distribution_distance": f.distribution_distance,
        "distribution_stability": f.distribution_stability.model_dump(mode="json") if f.distribution_stability else None,
        "training_distribution": f.training_distribution,
        "synthetic_distribution": f.synthetic_distribution,
    }


def _text_statistics(s, synthetic: bool) -> dict:
    d = {
        "row_count": s.row_count,
        "unique_values": s.unique_values,
        "average_sentence_count": s.average_sentence_count,
        "average_words_per_sentence": s.average_words_per_sentence,
        "average_characters_per_word": s.average_characters_per_word,
    }
    if synthetic:
        d["duplicate_lines"] = s.duplicate_lines
    return d


def _text_structure_columns(tss: TextStructureSimilarity) -> list[dict]:
    """Per text column: NSS's score and the three per-record statistics'
    types and JS distances, recomputed exactly as _get_text_statistics_score
    computes them (EvaluationField.from_series on NSS's per-record frames)."""
    out = []
    for name, training in tss.training_statistics.items():
        synthetic = tss.synthetic_statistics[name]
        fields = [
            EvaluationField.from_series(
                c, training=training.per_record_statistics[c], synthetic=synthetic.per_record_statistics[c]
            )
            for c in training.per_record_statistics.columns
        ]
        out.append({
            "name": name,
            "score": synthetic.text_statistic_score.model_dump(mode="json"),
            "average_divergence": EvaluationField.get_average_divergence(fields),
            "statistics": [
                {
                    "name": f.name,
                    "training_type": f.training_field_features.type.value,
                    "synthetic_type": f.synthetic_field_features.type.value,
                    "distribution_distance": f.distribution_distance,
                }
                for f in fields
            ],
            "training": _text_statistics(training, False),
            "synthetic": _text_statistics(synthetic, True),
        })
    return out


def scores_document(report: MultimodalReport) -> dict:
    comps = {type(c): c for c in report.components}
    ds: EvaluationDatasets = report.evaluation_datasets
    text_columns = ds.get_text_columns()
    if text_columns and "sentence_transformers" not in STUBBED:
        raise RuntimeError(
            f"NSS classified {text_columns} as text and sentence_transformers is installed: "
            "the fixtures record NSS without its embedding model; use a venv without it"
        )

    stats: DatasetStatistics = comps[DatasetStatistics]
    cd: ColumnDistribution = comps[ColumnDistribution]
    corr: Correlation = comps[Correlation]
    deep: DeepStructure = comps[DeepStructure]
    aia: AttributeInferenceProtection = comps[AttributeInferenceProtection]
    mia: MembershipInferenceProtection = comps[MembershipInferenceProtection]
    pii: PIIReplay = comps[PIIReplay]

    pca_fields = []
    if deep.training_pca is not None and deep.synthetic_pca is not None:
        for c in deep.training_pca.columns:
            f = EvaluationField.from_series(c, training=deep.training_pca[c], synthetic=deep.synthetic_pca[c])
            pca_fields.append({"component": c, "distribution_distance": f.distribution_distance})

    doc = {
        # SafeSynthesizerSummary's score fields, filled as results.make_nss_summary fills them
        "summary": {field: report.get_score_by_name(name) for field, name in REPORT_SCORE_FIELDS.items()},
        # MultimodalReport.get_dict(): NSS's own JSON of every component that has a score
        "report": report.get_dict(),
        # every component, scored or not, in report order (name -> EvaluationScore)
        "components": {c.name: _score(c) for c in report.components},
        "dataset_statistics": stats.model_dump(mode="json", exclude={"name", "score"}),
        "evaluated_columns": [str(c) for c in ds.training.columns],
        "tabular_columns": ds.get_tabular_columns(),
        "nominal_columns": ds.get_nominal_columns(),
        "text_columns": text_columns,
        "column_distribution_stability": {
            "score": _score(cd),
            "average_divergence": EvaluationField.get_average_divergence(
                [f for f in ds.evaluation_fields if f.name in set(ds.get_tabular_columns())]
            ),
            "fields": [_field(f) for f in ds.evaluation_fields],
        },
        "column_correlation_stability": {
            "score": _score(corr),
            "training_correlation": _matrix(corr.training_correlation),
            "synthetic_correlation": _matrix(corr.synthetic_correlation),
        },
        "deep_structure_stability": {"score": _score(deep), "pca_components": pca_fields},
        "attribute_inference_protection": {
            "score": _score(aia),
            "columns": aia.col_accuracy_df.to_dict(orient="records") if aia.col_accuracy_df is not None else None,
        },
        "membership_inference_protection": {
            "score": _score(mia),
            "attack_summary": mia.attack_sum_df.to_dict(orient="records") if mia.attack_sum_df is not None else None,
            "tps_values": mia.tps_values,
            "fps_values": mia.fps_values,
            "excluded_columns": mia.excluded_columns,
        },
        "data_privacy_score": _score(comps[DataPrivacyScore]),
        "synthetic_quality_score": _score(comps[SQSScore]),
        "text_semantic_similarity": _score(comps[TextSemanticSimilarity]),
        "text_structure_similarity": _score(comps[TextStructureSimilarity]),
        # only with text columns, so the tabular fixtures keep their bytes
        **({"text_structure_columns": _text_structure_columns(comps[TextStructureSimilarity])} if text_columns else {}),
        "pii_replay": {
            "computed": bool(pii.pii_replay_data),
            "why_not": "NSS runs PII Replay only with the PII replacer's column_statistics "
            "and evaluation.pii_replay_enabled; the evaluator gets none here",
            "score": _score(pii),
            "pii_replay_data": [d.model_dump(mode="json") for d in pii.pii_replay_data],
        },
    }
    return _clean(doc)


def _dumps(x, indent: int = 0) -> str:
    """JSON with one key per line, but lists of scalars (and matrix rows) on one line."""
    pad, inner = " " * indent, " " * (indent + 1)
    if isinstance(x, dict):
        if not x:
            return "{}"
        items = [f"{inner}{json.dumps(k)}: {_dumps(v, indent + 1)}" for k, v in x.items()]
        return "{\n" + ",\n".join(items) + "\n" + pad + "}"
    if isinstance(x, list) and any(isinstance(v, dict) or (isinstance(v, list) and v and isinstance(v[0], (dict, list))) for v in x):
        return "[\n" + ",\n".join(inner + _dumps(v, indent + 1) for v in x) + "\n" + pad + "]"
    if isinstance(x, list) and any(isinstance(v, list) for v in x):
        return "[\n" + ",\n".join(inner + json.dumps(v, allow_nan=False) for v in x) + "\n" + pad + "]"
    return json.dumps(x, allow_nan=False)


def write_json(path: Path, doc: dict) -> None:
    path.write_text(_dumps(doc) + "\n")


def versions_document() -> dict:
    from threadpoolctl import threadpool_info

    packages = {d.metadata["Name"]: d.version for d in importlib.metadata.distributions()}
    return {
        "python": platform.python_version(),
        "python_implementation": platform.python_implementation(),
        "PYTHONHASHSEED": os.environ["PYTHONHASHSEED"],
        "nemo_safe_synthesizer": nemo_safe_synthesizer.__version__,
        "entry_point": "nemo_safe_synthesizer.evaluation.reports.multimodal.multimodal_report."
        "MultimodalReport.from_dataframes(training, synthetic, test, config=SafeSynthesizerParameters())",
        "stubbed_imports": list(STUBBED),
        "split_seed": SPLIT_SEED,
        "packages": dict(sorted(packages.items(), key=lambda kv: kv[0].lower())),
        "blas": sorted({f"{i.get('internal_api')} {i.get('version')}" for i in threadpool_info()}),
    }


def read_back(path: Path, df: pd.DataFrame) -> pd.DataFrame:
    """Write df as CSV and return what reading that CSV gives: the evaluator sees the fixture's bytes."""
    df.to_csv(path, index=False, lineterminator="\n")
    return pd.read_csv(path)


def generate(out: Path, tables: list[str]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    write_json(out / "versions.json", versions_document())
    for table in tables:
        case = make_case(table)
        shutil.rmtree(out / table, ignore_errors=True)
        table_start = time.perf_counter()
        for variant in VARIANTS:
            d = out / table / variant
            d.mkdir(parents=True, exist_ok=True)
            train = read_back(d / "train.csv", case["train"])
            holdout = read_back(d / "holdout.csv", case["holdout"])
            synthetic = read_back(d / "synthetic.csv", case["synthetic"][variant])
            TIMINGS.clear()
            t0 = time.perf_counter()
            report = evaluate(train, holdout, synthetic)
            seconds = time.perf_counter() - t0
            doc = {
                "table": table,
                "variant": variant,
                "rows": {"train": len(train), "holdout": len(holdout), "synthetic": len(synthetic)},
                "columns": len(train.columns),
                "source_rows": {
                    "train": case["source_rows"]["train"],
                    "holdout": case["source_rows"]["holdout"],
                    "synthetic": case["source_rows"]["train"]
                    if variant != "independent"
                    else case["source_rows"]["independent"],
                },
                **scores_document(report),
            }
            write_json(d / "scores.json", doc)
            s = doc["summary"]
            print(
                f"{table:14s} {variant:12s} SQS {s['synthetic_data_quality_score']} DPS {s['data_privacy_score']} "
                f"(MIA {s['membership_inference_protection_score']} AIA {s['attribute_inference_protection_score']}) "
                f"{seconds:.2f}s [" + ", ".join(f"{k.split(' ')[0]} {v:.2f}" for k, v in TIMINGS.items()) + "]",
                file=sys.stderr,
            )
        print(f"{table}: {time.perf_counter() - table_start:.2f}s for 3 variants", file=sys.stderr)


def time_mode(n: int, table: str, write: Path | None) -> None:
    train, holdout, synthetic = (t.head(n) for t in timing_tables(table))
    if write is not None:
        write.mkdir(parents=True, exist_ok=True)
        train = read_back(write / "train.csv", train)
        holdout = read_back(write / "holdout.csv", holdout)
        synthetic = read_back(write / "synthetic.csv", synthetic)
    TIMINGS.clear()
    t0 = time.perf_counter()
    report = evaluate(train, holdout, synthetic)
    seconds = time.perf_counter() - t0
    s = {field: report.get_score_by_name(name) for field, name in REPORT_SCORE_FIELDS.items()}
    print(f"table {table}, {n} rows x {len(train.columns)} columns (train, holdout, synthetic each)")
    print(
        f"SQS {s['synthetic_data_quality_score']} DPS {s['data_privacy_score']} "
        f"MIA {s['membership_inference_protection_score']} AIA {s['attribute_inference_protection_score']}"
    )
    for c in report.components:
        if c.score.score is not None:
            print(f"  {c.name}: score {c.score.score} raw {c.score.raw_score}")
    for k, v in TIMINGS.items():
        print(f"  {v:8.3f} s  {k}")
    print(f"{seconds:.3f} seconds")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path, help="fixture directory to (re)write")
    ap.add_argument("--tables", default=",".join(TABLES), help="comma-separated subset of " + ",".join(TABLES))
    ap.add_argument("--time", type=int, metavar="N", help="time the evaluator on N rows (1..5000); writes nothing")
    ap.add_argument("--time-table", default="breast_cancer", choices=TABLES)
    ap.add_argument("--write", type=Path, help="with --time: also write the timed train/holdout/synthetic CSVs here")
    args = ap.parse_args()
    if args.time is not None:
        if not 1 <= args.time <= 5000:
            ap.error("--time N needs 1 <= N <= 5000")
        time_mode(args.time, args.time_table, args.write)
    elif args.out is not None:
        tables = [t for t in args.tables.split(",") if t]
        unknown = set(tables) - set(TABLES)
        if unknown:
            ap.error(f"unknown tables {sorted(unknown)}")
        generate(args.out, tables)
    else:
        ap.error("give --out DIR or --time N")


if __name__ == "__main__":
    main()
