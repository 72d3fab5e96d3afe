// Radix-2 FFT of real sequences, for the PRV accountant's k-fold convolution
// of a discretised privacy-loss distribution (its characteristic function
// raised to the k-th power). A real sequence of length n goes through one
// complex FFT of length n/2.
#pragma once

#include <complex>
#include <cstddef>
#include <vector>

namespace nss::privacy {

/// Forward and inverse transforms of one length, sharing their twiddles.
class RealFft {
 public:
  /// `n` must be a power of two, at least 4.
  explicit RealFft(std::size_t n);

  /// X_j = sum_k x_k exp(-2 pi i j k / n) for j = 0 .. n/2 (the other half
  /// is the conjugate mirror); x.size() must be n.
  std::vector<std::complex<double>> forward(const std::vector<double>& x) const;

  /// The real sequence whose forward() is `spectrum` (n/2 + 1 values),
  /// including the 1/n of the inverse transform.
  std::vector<double> inverse(const std::vector<std::complex<double>>& spectrum) const;

 private:
  void complex_fft(std::vector<std::complex<double>>& a) const;

  std::size_t n_;
  std::vector<std::complex<double>> roots_;   // exp(-2 pi i j / n), j < n/2
  std::vector<std::complex<double>> stages_;  // [half + j] = exp(-pi i j / half)
};

}  // namespace nss::privacy
