import Catalog
import Foundation

/// Property: records that parse, written back with every field quoted, parse to the same records.
@_cdecl("LLVMFuzzerTestOneInput")
public func fuzz(_ bytes: UnsafePointer<UInt8>, _ count: Int) -> CInt {
    let data = Data(bytes: bytes, count: count)
    guard let records = try? CSVReader().records(data) else { return 0 }
    // Escape byte by byte: a String-level replace would miss a quote that a following combining
    // mark joins into one Character.
    var written: [UInt8] = []
    for (number, record) in records.enumerated() {
        if number > 0 { written += [13, 10] }
        for (column, field) in record.enumerated() {
            if column > 0 { written.append(UInt8(ascii: ",")) }
            written.append(UInt8(ascii: "\""))
            for byte in field.utf8 {
                written.append(byte)
                if byte == UInt8(ascii: "\"") { written.append(byte) }
            }
            written.append(UInt8(ascii: "\""))
        }
    }
    guard let again = try? CSVReader().records(Data(written)) else { fatalError("quoted records do not parse") }
    // A record of one empty field is a blank line, which is not a record.
    let expected = records.filter { !($0.count == 1 && $0[0].isEmpty) }
    guard again == expected else { fatalError("round trip differs") }
    _ = try? ClassSpreadsheet.lessons(from: data, policy: .skip)
    return 0
}
