/// Consumes `value` so the optimizer cannot prove a benchmark's result unused and delete the work.
///
/// `@_optimize(none)` keeps the body opaque to the optimizer even in a release build.
@inline(never)
@_optimize(none)
public func blackHole<Value>(_ value: Value) {
    _ = value
}
