import Catalog
import Foundation

/// Property: any template that parses expands, with and without values, without trapping, and
/// an expansion never contains the braces of an expression.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let text = String(decoding: UnsafeBufferPointer(start: bytes, count: count), as: UTF8.self)
    guard let template = try? URITemplate(text) else { return 0 }
    var values: [String: String] = [:]
    for (index, name) in template.variableNames.enumerated() { values[name] = index.isMultiple(of: 2) ? "a b/é" : "" }
    _ = template.expand()
    let expanded = template.expand(values)
    if !text.contains("%7B"), expanded.contains("{") { fatalError("an expression survived: \(text) -> \(expanded)") }
    return 0
}
