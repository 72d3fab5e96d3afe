#include "evaluate/nearest_neighbors.h"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <limits>
#include <thread>

#include "core/error.h"

namespace nss::evaluate {
namespace {

constexpr std::size_t kTile = 4;            // query rows x reference rows per register tile
constexpr std::size_t kQueryPanel = 64;     // query rows sharing one pass over the references
constexpr std::size_t kSklearnChunk = 256;  // sklearn's pairwise_dist_chunk_size
constexpr double kInfinity = std::numeric_limits<double>::infinity();

double squared_norm(const float* x, std::size_t cols) {
  double sum = 0;
  for (std::size_t k = 0; k < cols; ++k) sum += static_cast<double>(x[k]) * x[k];
  return sum;
}

// sklearn's |x|^2 + (-2 x.y) + |y|^2, in that order, clamped at 0.
double combine(double x_norm, double dot, double y_norm) {
  return std::max(0.0, x_norm + -2.0 * dot + y_norm);
}

// Two doubles in one SSE2 register (GCC/Clang vector extension): the unit of
// the distance kernel. Each lane sums its products in feature order, so the
// dot products equal squared_distance's.
using DoublePair = double __attribute__((vector_size(16)));

// `rows` as doubles in tiles of kTile rows: tile t holds, feature by
// feature, its rows' values (zeros past the last row).
std::vector<double> packed_tiles(const FeatureRows& rows, std::size_t first, std::size_t count) {
  const std::size_t tiles = (count + kTile - 1) / kTile;
  std::vector<double> out(tiles * rows.cols * kTile, 0.0);
  for (std::size_t j = 0; j < count; ++j)
    for (std::size_t k = 0; k < rows.cols; ++k)
      out[(j / kTile * rows.cols + k) * kTile + j % kTile] = rows.row(first + j)[k];
  return out;
}

// The kTile x kTile dot products of a query tile and a reference tile, kept
// in registers across the features.
void tile_dots(const double* queries, const double* references, std::size_t cols,
               double dots[kTile][kTile]) {
  DoublePair low[kTile] = {}, high[kTile] = {};
  for (std::size_t k = 0; k < cols; ++k) {
    DoublePair y_low, y_high, x;
    std::memcpy(&y_low, references + k * kTile, sizeof y_low);
    std::memcpy(&y_high, references + k * kTile + 2, sizeof y_high);
    for (std::size_t q = 0; q < kTile; ++q) {
      std::memcpy(&x, queries + (k * kTile + q) * 2, sizeof x);
      low[q] += x * y_low;
      high[q] += x * y_high;
    }
  }
  for (std::size_t q = 0; q < kTile; ++q)
    for (std::size_t r = 0; r < 2; ++r) {
      dots[q][r] = low[q][r];
      dots[q][r + 2] = high[q][r];
    }
}

// Queries packed for tile_dots: per tile and feature, each row's value twice
// (a broadcast pair).
std::vector<double> packed_query_pairs(const FeatureRows& queries, std::size_t first,
                                       std::size_t count) {
  const std::vector<double> tiles = packed_tiles(queries, first, count);
  std::vector<double> out(tiles.size() * 2);
  for (std::size_t i = 0; i < tiles.size(); ++i) out[2 * i] = out[2 * i + 1] = tiles[i];
  return out;
}

// The nearest squared distance of the query rows [first, first + count)
// (at most kQueryPanel) to every reference row, tile by tile.
void nearest_in_panel(const FeatureRows& queries, std::size_t first, std::size_t count,
                      const std::vector<double>& reference_tiles,
                      const std::vector<double>& x_norms, const std::vector<double>& y_norms,
                      double* nearest) {
  const std::size_t cols = queries.cols, references = y_norms.size();
  const std::vector<double> panel = packed_query_pairs(queries, first, count);
  double dots[kTile][kTile];
  std::fill(nearest, nearest + count, kInfinity);
  for (std::size_t j0 = 0; j0 < references; j0 += kTile) {
    const double* tile = reference_tiles.data() + j0 * cols;
    for (std::size_t q0 = 0; q0 < count; q0 += kTile) {
      tile_dots(panel.data() + q0 * cols * 2, tile, cols, dots);
      for (std::size_t q = 0; q < kTile && q0 + q < count; ++q)
        for (std::size_t r = 0; r < kTile && j0 + r < references; ++r)
          nearest[q0 + q] = std::min(nearest[q0 + q],
                                     combine(x_norms[first + q0 + q], dots[q][r], y_norms[j0 + r]));
    }
  }
}

// sklearn's heap_push on a max-heap of `size` slots: replace the root when
// `value` is smaller, then sift it down.
void heap_push(double* values, std::size_t* indices, std::size_t size, double value,
               std::size_t index) {
  if (value >= values[0]) return;
  std::size_t current = 0;
  for (;;) {
    const std::size_t left = 2 * current + 1, right = left + 1;
    std::size_t swap;
    if (left >= size) break;
    if (right >= size) {
      if (values[left] > value)
        swap = left;
      else
        break;
    } else if (values[left] >= values[right]) {
      if (value < values[left])
        swap = left;
      else
        break;
    } else {
      if (value < values[right])
        swap = right;
      else
        break;
    }
    values[current] = values[swap];
    indices[current] = indices[swap];
    current = swap;
  }
  values[current] = value;
  indices[current] = index;
}

void swap_entries(double* values, std::size_t* indices, std::size_t a, std::size_t b) {
  std::swap(values[a], values[b]);
  std::swap(indices[a], indices[b]);
}

void insertion_sort(double* values, std::size_t* indices, std::size_t n) {
  for (std::size_t i = 1; i < n; ++i) {
    const double value = values[i];
    const std::size_t index = indices[i];
    std::size_t j = i;
    for (; j > 0 && values[j - 1] > value; --j) {
      values[j] = values[j - 1];
      indices[j] = indices[j - 1];
    }
    values[j] = value;
    indices[j] = index;
  }
}

void sift_down(double* values, std::size_t* indices, std::size_t root, std::size_t end) {
  for (;;) {
    const std::size_t child = 2 * root + 1;
    std::size_t largest = root;
    if (child < end && values[largest] < values[child]) largest = child;
    if (child + 1 < end && values[largest] < values[child + 1]) largest = child + 1;
    if (largest == root) return;
    swap_entries(values, indices, root, largest);
    root = largest;
  }
}

void heapsort(double* values, std::size_t* indices, std::size_t n) {
  for (std::size_t start = (n - 2) / 2 + 1; start-- > 0;) sift_down(values, indices, start, n);
  for (std::size_t end = n - 1; end > 0; --end) {
    swap_entries(values, indices, 0, end);
    sift_down(values, indices, 0, end);
  }
}

// Median of first, middle and last moved to the last slot; its value.
double median_of_three(double* values, std::size_t* indices, std::size_t n) {
  const std::size_t middle = n / 2, last = n - 1;
  if (values[0] > values[last]) swap_entries(values, indices, 0, last);
  if (values[last] > values[middle]) {
    swap_entries(values, indices, last, middle);
    if (values[0] > values[last]) swap_entries(values, indices, 0, last);
  }
  return values[last];
}

// sklearn 1.9's simultaneous_sort (introsort, two-way partition; insertion
// sort below 16 entries): its order of equal distances is the order NSS's
// neighbours come in.
void introsort(double* values, std::size_t* indices, std::size_t n, long depth) {
  while (n > 15) {
    if (depth-- <= 0) {
      heapsort(values, indices, n);
      return;
    }
    const double pivot = median_of_three(values, indices, n);
    std::size_t i = 1, j = n - 2;
    for (;;) {
      while (i <= j && values[i] < pivot) ++i;
      while (i <= j && values[j] > pivot) --j;
      if (i >= j) break;
      swap_entries(values, indices, i++, j--);
    }
    swap_entries(values, indices, i, n - 1);
    introsort(values, indices, i, depth);
    values += i + 1;
    indices += i + 1;
    n -= i + 1;
  }
  insertion_sort(values, indices, n);
}

void simultaneous_sort(double* values, std::size_t* indices, std::size_t n) {
  if (n == 0) return;
  introsort(values, indices, n, 2 * static_cast<long>(std::log2(static_cast<double>(n))));
}

void check_enough_references(const FeatureRows& references, std::size_t k) {
  if (references.rows == 0)
    throw DataError("evaluate", "Found array with 0 sample(s) (shape=(0, " +
                                    std::to_string(references.cols) +
                                    ")) while a minimum of 1 is required by NearestNeighbors.");
  if (references.rows < k)
    throw DataError(
        "evaluate",
        "Expected n_neighbors <= n_samples_fit, but n_neighbors = " + std::to_string(k) +
            ", n_samples_fit = " + std::to_string(references.rows) + ", n_samples = 1");
}

}  // namespace

double squared_distance(const float* x, const float* y, std::size_t cols) {
  double dot = 0;
  for (std::size_t k = 0; k < cols; ++k) dot += static_cast<double>(x[k]) * y[k];
  return combine(squared_norm(x, cols), dot, squared_norm(y, cols));
}

std::vector<double> nearest_distances(const FeatureRows& queries, const FeatureRows& references,
                                      unsigned threads) {
  std::vector<double> nearest(queries.rows, kInfinity);
  if (queries.rows == 0 || references.rows == 0) return nearest;
  std::vector<double> x_norms(queries.rows), y_norms(references.rows);
  for (std::size_t i = 0; i < queries.rows; ++i)
    x_norms[i] = squared_norm(queries.row(i), queries.cols);
  for (std::size_t j = 0; j < references.rows; ++j)
    y_norms[j] = squared_norm(references.row(j), references.cols);
  const std::vector<double> tiles = packed_tiles(references, 0, references.rows);
  const std::size_t panels = (queries.rows + kQueryPanel - 1) / kQueryPanel;
  const unsigned hardware = std::max(1u, std::thread::hardware_concurrency());
  const std::size_t workers = std::min<std::size_t>(panels, threads == 0 ? hardware : threads);
  const auto work = [&](std::size_t worker) {
    for (std::size_t p = worker; p < panels; p += workers) {
      const std::size_t first = p * kQueryPanel;
      nearest_in_panel(queries, first, std::min(kQueryPanel, queries.rows - first), tiles, x_norms,
                       y_norms, nearest.data() + first);
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t w = 1; w < workers; ++w) pool.emplace_back(work, w);
  work(0);
  for (std::thread& t : pool) t.join();
  for (double& d : nearest) d = std::sqrt(d);
  return nearest;
}

std::vector<std::size_t> k_nearest_rows(const float* query, const FeatureRows& references,
                                        std::size_t k, unsigned emulated_threads) {
  check_enough_references(references, k);
  const std::size_t n = references.rows, cols = references.cols;
  const double x_norm = squared_norm(query, cols);
  // sklearn parallelises one query over the reference rows: chunks of 256
  // split into contiguous runs, one heap per thread, merged in thread order.
  const std::size_t chunks = (n + kSklearnChunk - 1) / kSklearnChunk;
  const std::size_t runs =
      std::max<std::size_t>(1, std::min<std::size_t>(emulated_threads, chunks));
  std::vector<double> merged(k, kInfinity);
  std::vector<std::size_t> merged_indices(k, static_cast<std::size_t>(-1));
  std::vector<double> heap(k);
  std::vector<std::size_t> heap_indices(k);
  std::size_t chunk = 0;
  for (std::size_t t = 0; t < runs; ++t) {
    const std::size_t run_chunks = chunks / runs + (t < chunks % runs ? 1 : 0);
    std::fill(heap.begin(), heap.end(), kInfinity);
    std::fill(heap_indices.begin(), heap_indices.end(), static_cast<std::size_t>(-1));
    const std::size_t end = std::min(n, (chunk + run_chunks) * kSklearnChunk);
    for (std::size_t j = chunk * kSklearnChunk; j < end; ++j) {
      const float* y = references.row(j);
      double dot = 0;
      for (std::size_t c = 0; c < cols; ++c) dot += static_cast<double>(query[c]) * y[c];
      heap_push(heap.data(), heap_indices.data(), k, combine(x_norm, dot, squared_norm(y, cols)),
                j);
    }
    chunk += run_chunks;
    for (std::size_t s = 0; s < k; ++s)
      heap_push(merged.data(), merged_indices.data(), k, heap[s], heap_indices[s]);
  }
  simultaneous_sort(merged.data(), merged_indices.data(), k);
  return merged_indices;
}

}  // namespace nss::evaluate
