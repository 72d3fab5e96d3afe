#include "privacy/fft.h"

#include <cmath>
#include <string>
#include <utility>

#include "core/error.h"

namespace nss::privacy {
namespace {

using Complex = std::complex<double>;

// Spelled out: std::complex's operator* calls __muldc3 for its NaN handling,
// several times slower in the butterfly loop; no value here is NaN or Inf.
inline Complex mul(Complex a, Complex b) {
  return {a.real() * b.real() - a.imag() * b.imag(), a.real() * b.imag() + a.imag() * b.real()};
}

}  // namespace

RealFft::RealFft(std::size_t n) : n_(n), roots_(n / 2), stages_(n / 2) {
  NSS_ASSERT(n >= 4 && (n & (n - 1)) == 0, "privacy", "FFT length " + std::to_string(n));
  // Each root from sin/cos directly (a recurrence would accumulate rounding
  // over a million entries), for an eighth of the circle; the symmetries
  // exp(-i(pi/2 - a)) = (sin a, -cos a) and exp(-i(pi/2 + a)) = -i exp(-ia)
  // give the rest exactly.
  const std::size_t quarter = n / 4;
  const double step = 2.0 * M_PI / static_cast<double>(n);
  for (std::size_t j = 0; 2 * j <= quarter; ++j) {
    const double c = std::cos(step * static_cast<double>(j));
    const double s = std::sin(step * static_cast<double>(j));
    roots_[j] = {c, -s};
    roots_[quarter - j] = {s, -c};
  }
  for (std::size_t j = quarter; j < n / 2; ++j)
    roots_[j] = {roots_[j - quarter].imag(), -roots_[j - quarter].real()};
  // The complex FFT has length m = n/2; its stage of butterflies over `len`
  // points uses exp(-2 pi i j / len) = roots_[j * n / len], stored
  // contiguously per stage so that the inner loop reads memory in order.
  const std::size_t m = n / 2;
  for (std::size_t half = 1; half < m; half <<= 1)
    for (std::size_t j = 0; j < half; ++j) stages_[half + j] = roots_[j * (n / (2 * half))];
}

// Iterative decimation-in-time FFT of length n/2, unscaled.
void RealFft::complex_fft(std::vector<Complex>& a) const {
  const std::size_t m = a.size();
  for (std::size_t i = 1, j = 0; i < m; ++i) {
    std::size_t bit = m >> 1;
    for (; j & bit; bit >>= 1) j ^= bit;
    j ^= bit;
    if (i < j) std::swap(a[i], a[j]);
  }
  for (std::size_t half = 1; half < m; half <<= 1) {
    const Complex* w = stages_.data() + half;
    for (std::size_t start = 0; start < m; start += 2 * half) {
      Complex* lo = a.data() + start;
      Complex* hi = lo + half;
      for (std::size_t j = 0; j < half; ++j) {
        const Complex u = lo[j], v = mul(hi[j], w[j]);
        lo[j] = u + v;
        hi[j] = u - v;
      }
    }
  }
}

std::vector<Complex> RealFft::forward(const std::vector<double>& x) const {
  NSS_ASSERT(x.size() == n_, "privacy", "FFT input of the wrong length");
  const std::size_t h = n_ / 2;
  // Even samples as real parts, odd ones as imaginary parts: one FFT of n/2.
  std::vector<Complex> z(h);
  for (std::size_t i = 0; i < h; ++i) z[i] = {x[2 * i], x[2 * i + 1]};
  complex_fft(z);
  std::vector<Complex> out(h + 1);
  for (std::size_t j = 0; j <= h; ++j) {
    const Complex a = z[j % h], b = std::conj(z[(h - j) % h]);
    const Complex even = 0.5 * (a + b), odd = Complex(0.0, -0.5) * (a - b);
    const Complex w = j < h ? roots_[j] : Complex(-1.0, 0.0);
    out[j] = even + mul(w, odd);
  }
  return out;
}

std::vector<double> RealFft::inverse(const std::vector<Complex>& spectrum) const {
  const std::size_t h = n_ / 2;
  NSS_ASSERT(spectrum.size() == h + 1, "privacy", "inverse FFT input of the wrong length");
  // Unpack into the half-length complex spectrum, conjugated: the inverse
  // transform is the conjugate of the forward one of the conjugate.
  std::vector<Complex> z(h);
  for (std::size_t j = 0; j < h; ++j) {
    const Complex a = spectrum[j], b = std::conj(spectrum[h - j]);
    const Complex even = 0.5 * (a + b), odd = mul(0.5 * (a - b), std::conj(roots_[j]));
    z[j] = std::conj(even + Complex(0.0, 1.0) * odd);
  }
  complex_fft(z);
  std::vector<double> x(n_);
  const double scale = 1.0 / static_cast<double>(h);
  for (std::size_t i = 0; i < h; ++i) {
    x[2 * i] = z[i].real() * scale;
    x[2 * i + 1] = -z[i].imag() * scale;
  }
  return x;
}

}  // namespace nss::privacy
