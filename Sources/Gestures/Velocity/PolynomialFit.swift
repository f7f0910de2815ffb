/// A weighted least-squares polynomial fit: the coefficients of `y ≈ c₀ + c₁x + … + c_d x^d`.
///
/// The fit solves the weighted Vandermonde system by a QR decomposition (modified Gram–Schmidt),
/// which stays accurate where the normal equations lose half the digits.
public struct PolynomialFit: Sendable, Hashable {
    /// The coefficients, constant term first.
    public let coefficients: [Double]
    /// The coefficient of determination R², 0…1: how much of the variation in `y` the fit
    /// explains (1 when `y` does not vary at all).
    public let confidence: Double

    /// Fits a polynomial of `degree` to the points, or returns `nil` when the points cannot
    /// determine one (fewer points than coefficients, mismatched lengths, non-finite input, or
    /// points that are linearly dependent in the basis).
    ///
    /// Whether the points determine the polynomial is judged relative to the scale of the data:
    /// a basis column counts as dependent when less than a billionth of its length is left
    /// after removing its projection on the lower powers. Scaling `x` scales each column and
    /// that remainder alike, so three distinct times fit a quadratic whether they are written
    /// in seconds or in milliseconds.
    ///
    /// - Complexity: O(*m* · *d*²) for *m* points and degree *d*.
    public init?(x: [Double], y: [Double], weights: [Double]? = nil, degree: Int) {
        guard let fit = Self.fits(x: x, ys: [y], weights: weights, degree: degree)?.first else { return nil }
        self = fit
    }

    private init(coefficients: [Double], confidence: Double) {
        self.coefficients = coefficients
        self.confidence = confidence
    }

    /// Fits one polynomial per series in `ys` against the same `x`, factoring the matrix once:
    /// a velocity tracker fits both axes of the same samples.
    ///
    /// - Complexity: O(*m* · *d*² + *s* · *m* · *d*) for *m* points, degree *d*, *s* series.
    static func fits(x: [Double], ys: [[Double]], weights: [Double]? = nil, degree: Int) -> [PolynomialFit]? {
        let count = x.count
        let size = degree + 1
        guard degree >= 0, count >= size, ys.allSatisfy({ $0.count == count }),
            weights.map({ $0.count == count }) ?? true
        else { return nil }
        guard x.allSatisfy(\.isFinite), ys.allSatisfy({ $0.allSatisfy(\.isFinite) }),
            weights?.allSatisfy({ $0.isFinite && $0 >= 0 }) ?? true
        else { return nil }
        // Column j of the weighted Vandermonde matrix, stored flat: a[j * count + i] = w_i · x_i^j.
        var a = [Double](repeating: 0, count: size * count)
        for i in 0..<count {
            var power = weights?[i] ?? 1
            for j in 0..<size {
                a[j * count + i] = power
                power *= x[i]
            }
        }
        // Modified Gram–Schmidt: a = Q·R, Q's columns orthonormal, R upper-triangular.
        var q = a
        var r = [Double](repeating: 0, count: size * size)
        for j in 0..<size {
            for k in 0..<j {
                var dot = 0.0
                for i in 0..<count { dot += q[j * count + i] * q[k * count + i] }
                for i in 0..<count { q[j * count + i] -= dot * q[k * count + i] }
            }
            var norm = 0.0
            var original = 0.0
            for i in 0..<count {
                norm += q[j * count + i] * q[j * count + i]
                original += a[j * count + i] * a[j * count + i]
            }
            norm = norm.squareRoot()
            // A column that (numerically) vanishes next to its own length: the points do not
            // determine the polynomial. Relative, so the units of `x` do not matter.
            guard norm > 1e-9 * original.squareRoot(), norm > 0 else { return nil }
            for i in 0..<count { q[j * count + i] /= norm }
            for k in j..<size {
                var dot = 0.0
                for i in 0..<count { dot += q[j * count + i] * a[k * count + i] }
                r[j * size + k] = dot
            }
        }
        return ys.map { y in
            // Solve R·c = Qᵀ·(w∘y) by back substitution.
            var coefficients = [Double](repeating: 0, count: size)
            for j in stride(from: size - 1, through: 0, by: -1) {
                var value = 0.0
                for i in 0..<count { value += q[j * count + i] * y[i] * (weights?[i] ?? 1) }
                for k in (j + 1)..<size { value -= r[j * size + k] * coefficients[k] }
                coefficients[j] = value / r[j * size + j]
            }
            // R² from the weighted residuals.
            var mean = 0.0
            for value in y { mean += value }
            mean /= Double(count)
            var residual = 0.0
            var total = 0.0
            for i in 0..<count {
                var estimate = 0.0
                var power = 1.0
                for coefficient in coefficients {
                    estimate += coefficient * power
                    power *= x[i]
                }
                let weight = weights?[i] ?? 1
                let error = y[i] - estimate
                let spread = y[i] - mean
                residual += weight * weight * error * error
                total += weight * weight * spread * spread
            }
            let confidence = total <= 1e-6 ? 1 : Swift.max(0, Swift.min(1, 1 - residual / total))
            return PolynomialFit(coefficients: coefficients, confidence: confidence)
        }
    }
}
