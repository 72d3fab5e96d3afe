// Deep structure stability: the training table's first two principal
// components (numbers median-filled, categories count-encoded, standardised
// on training), both tables projected on them, and the projections'
// distributions compared (NeMo Safe Synthesizer's compute_joined_pcas).
#pragma once

#include <vector>

#include "evaluate/evaluation_result.h"
#include "evaluate/evaluation_tables.h"

namespace nss::evaluate {

/// Eigenvalues (descending) and eigenvectors (row k = vector k) of the
/// symmetric `n` x `n` matrix `a` (row-major), by Jacobi rotations.
void symmetric_eigen(std::vector<double> a, std::size_t n, std::vector<double>& values,
                     std::vector<std::vector<double>>& vectors);

DeepStructureResult measure_deep_structure(const EvaluationTables& tables);

}  // namespace nss::evaluate
