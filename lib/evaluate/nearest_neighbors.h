// Brute-force Euclidean nearest neighbours on float32 features, with
// sklearn's arithmetic (NearestNeighbors(algorithm='brute'), the CPU path
// NeMo Safe Synthesizer takes without a GPU): squared distances in double as
// |x|^2 - 2 x.y + |y|^2 clamped at 0, and its k-slot max-heap, merge and
// sort (scikit-learn 1.9.1, the version the fixtures were made with), so that
// ties between equally near rows come out in sklearn's order.
#pragma once

#include <cstddef>
#include <vector>

#include "evaluate/privacy_encoding.h"

namespace nss::evaluate {

/// The squared distance sklearn computes from the float32 rows `x` and `y`
/// of `cols` features (in double, clamped at 0).
double squared_distance(const float* x, const float* y, std::size_t cols);

/// Each query row's distance to its nearest reference row. Blocked loops
/// over `threads` threads (0: the hardware's); the result does not depend on
/// the thread count.
std::vector<double> nearest_distances(const FeatureRows& queries, const FeatureRows& references,
                                      unsigned threads = 0);

/// The `k` reference rows nearest to `query`, nearest first, with ties in
/// the order sklearn returns them when it runs on `emulated_threads` OpenMP
/// threads (1 reproduces NeMo Safe Synthesizer run with OMP_NUM_THREADS=1).
/// DataError carrying sklearn's message when there are fewer than k rows.
std::vector<std::size_t> k_nearest_rows(const float* query, const FeatureRows& references,
                                        std::size_t k, unsigned emulated_threads = 1);

}  // namespace nss::evaluate
