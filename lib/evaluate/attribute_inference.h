// Attribute Inference Protection as NeMo Safe Synthesizer scores it
// (tabular path): an attacker who knows three columns (quasi-identifiers)
// of a training row takes the five nearest synthetic rows on them and
// guesses every other column from those (majority or mean); each column's
// guessing accuracy, weighted by its entropy, becomes a 0-10 risk.
#pragma once

#include <cstddef>
#include <string>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"
#include "evaluate/reference_random.h"

namespace nss::evaluate {

/// True when a numeric column's name says it is a code, an id, a date...
/// (NSS's rule: split on the first of "_", " ", "-", "." it holds, then on
/// camel case; any lowercased token among class, code, id, zip, year, ...):
/// the attack then guesses it by majority, not by mean.
bool name_looks_categorical(const std::string& name);

/// How close a guessed number must come, relative to the true value `value`:
/// 1%, divided by 10 once per digit after the point of the value's exact
/// decimal expansion when the column is float (2.5 -> 0.001).
double numeric_tolerance(double value, bool float_column);

/// NSS's pandas entropy of a column (natural log, missing cells ignored),
/// summed in numpy's pairwise order.
double column_entropy(const Column& column);

/// Fills score, columns, attacked_rows and quasi_identifiers. Unavailable
/// with fewer than 2 columns (no notes), with a text column (notes: a
/// sentence-embedding model is needed), or when a quasi-identifier
/// combination leaves fewer than 5 synthetic rows (notes: sklearn's error).
/// `global_rng` is numpy's global RandomState: reseeded with 5 and advanced
/// by the shuffle of the combinations, as NSS does (MIA draws from it next).
/// `emulated_threads`: the OpenMP thread count whose neighbour tie order
/// to reproduce (1 = NSS run with OMP_NUM_THREADS=1).
AttributeResult measure_attribute_inference(const EvaluationTables& tables,
                                            LegacyRandom& global_rng,
                                            unsigned emulated_threads = 1);

}  // namespace nss::evaluate
