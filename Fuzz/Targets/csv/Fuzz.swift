import Catalog
import Foundation

/// Property: records that parse, written back with every field quoted, parse to the same records.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    guard let records = try? CSVReader().records(data) else { return 0 }
    let written = records.map { record in
        record.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: ",")
    }.joined(separator: "\r\n")
    guard let again = try? CSVReader().records(Data(written.utf8)) else { fatalError("quoted records do not parse") }
    // A record of one empty field is a blank line, which is not a record.
    let expected = records.filter { !($0.count == 1 && $0[0].isEmpty) }
    guard again == expected else { fatalError("round trip differs") }
    _ = try? ClassSpreadsheet.lessons(from: data, policy: .skip)
    return 0
}
