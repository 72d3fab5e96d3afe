#!/usr/bin/env python3
"""Reference scores from NVIDIA NeMo Safe Synthesizer's (NSS) own evaluator.

Golden fixtures for nss_evaluate (the C++ reimplementation of NSS's SQS
quality score and DPS privacy score). Runs in the separate venv that
scripts/make_evaluation_fixtures.sh builds (nemo-safe-synthesizer 0.1.16
installed with --no-deps plus the pinned packages its evaluation modules
import); never part of scripts/setup.sh or the test command.

  evaluation_reference.py --out tests/fixtures/evaluation
      writes, for each scikit-learn table and synthetic variant,
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
On tabular data (no column NSS classifies as text; checked for every table,
the script stops otherwise) the only torch call on the evaluation path is
torch.cuda.is_available() in NearestNeighborSearch._detect_device, and
sentence_transformers is used only for text columns. So while NSS's modules
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
TABLES = ("iris", "wine", "breast_cancer", "diabetes", "mixed")
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
            raise RuntimeError("sentence_transformers is stubbed: text columns are not supported by this reference")

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


def load_table(name: str) -> pd.DataFrame:
    """A scikit-learn bundled table as a DataFrame with the target as column
    `target`, or the generated mixed table."""
    from sklearn import datasets

    if name == "mixed":
        return mixed_table()

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


def scores_document(report: MultimodalReport) -> dict:
    comps = {type(c): c for c in report.components}
    ds: EvaluationDatasets = report.evaluation_datasets
    text_columns = ds.get_text_columns()
    if text_columns:
        raise RuntimeError(f"NSS classified {text_columns} as text; the stubbed reference cannot embed text")

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
