public import Foundation

/// The first bytes of a body as text, for error messages: at most `limit` bytes, invalid UTF-8
/// replaced, control characters escaped, and `…` when cut.
public func bodyPreview(_ body: Data, limit: Int = 80) -> String {
    let prefix = body.prefix(max(limit, 0))
    var text = ""
    for scalar in String(decoding: prefix, as: UTF8.self).unicodeScalars {
        switch scalar {
        case "\n": text += "\\n"
        case "\r": text += "\\r"
        case "\t": text += "\\t"
        case _ where scalar.value < 0x20 || scalar.value == 0x7F:
            text += "\\u{\(String(scalar.value, radix: 16))}"
        default: text.unicodeScalars.append(scalar)
        }
    }
    return body.count > prefix.count ? text + "…" : text
}
