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
    /// - Complexity: O(*m* · *d*²) for *m* points and degree *d*.
    public init?(x: [Double], y: [Double], weights: [Double]? = nil, degree: Int) {
        let count = x.count
        let size = degree + 1
        guard degree >= 0, y.count == count, count >= size, weights.map({ $0.count == count }) ?? true else {
            return nil
        }
        let weights = weights ?? [Double](repeating: 1, count: count)
        guard x.allSatisfy(\.isFinite), y.allSatisfy(\.isFinite), weights.allSatisfy({ $0.isFinite && $0 >= 0 }) else {
            return nil
        }
        // Columns of the weighted Vandermonde matrix: a[j][i] = w_i · x_i^j.
        var a = [[Double]](repeating: [Double](repeating: 0, count: count), count: size)
        for i in 0..<count {
            var power = weights[i]
            for j in 0..<size {
                a[j][i] = power
                power *= x[i]
            }
        }
        // Modified Gram–Schmidt: a = Q·R with orthonormal columns q and upper-triangular r.
        var q = a
        var r = [[Double]](repeating: [Double](repeating: 0, count: size), count: size)
        for j in 0..<size {
            for k in 0..<j {
                var dot = 0.0
                for i in 0..<count { dot += q[j][i] * q[k][i] }
                for i in 0..<count { q[j][i] -= dot * q[k][i] }
            }
            var norm = 0.0
            for i in 0..<count { norm += q[j][i] * q[j][i] }
            norm = norm.squareRoot()
            // A column that (numerically) vanishes: the points do not determine the polynomial.
            guard norm >= 1e-6 else { return nil }
            for i in 0..<count { q[j][i] /= norm }
            for k in 0..<size {
                var dot = 0.0
                for i in 0..<count { dot += q[j][i] * a[k][i] }
                r[j][k] = dot
            }
        }
        // Solve R·c = Qᵀ·(w∘y) by back substitution.
        var weightedY = [Double](repeating: 0, count: count)
        for i in 0..<count { weightedY[i] = y[i] * weights[i] }
        var coefficients = [Double](repeating: 0, count: size)
        for j in stride(from: size - 1, through: 0, by: -1) {
            var value = 0.0
            for i in 0..<count { value += q[j][i] * weightedY[i] }
            for k in (j + 1)..<size { value -= r[j][k] * coefficients[k] }
            coefficients[j] = value / r[j][j]
        }
        // R² from the weighted residuals.
        var mean = 0.0
        for i in 0..<count { mean += y[i] }
        mean /= Double(count)
        var residual = 0.0
        var total = 0.0
        for i in 0..<count {
            var estimate = 0.0
            var power = 1.0
            for j in 0..<size {
                estimate += coefficients[j] * power
                power *= x[i]
            }
            let error = y[i] - estimate
            let spread = y[i] - mean
            residual += weights[i] * weights[i] * error * error
            total += weights[i] * weights[i] * spread * spread
        }
        self.coefficients = coefficients
        self.confidence = total <= 1e-6 ? 1 : Swift.max(0, Swift.min(1, 1 - residual / total))
    }
}
