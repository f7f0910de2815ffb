public import Foundation

/// Why a CSV record could not be read.
public struct CSVError: Error, Hashable, Sendable, CustomStringConvertible {
    /// What was wrong.
    public enum Kind: Hashable, Sendable {
        /// A quoted field is not closed before the end of the data.
        case unterminatedQuote
        /// Characters after a closing quote, before the next separator.
        case textAfterQuote
        /// A record with another number of fields than the header.
        case wrongFieldCount(expected: Int, found: Int)
        /// A required column is missing from the header.
        case missingColumn(String)
        /// A required field is empty.
        case emptyField(column: String)
        /// A field or record is longer than the reader's limit.
        case tooLong(limit: Int)
        /// The data holds more records than the reader's limit.
        case tooManyRecords(limit: Int)
        /// The header names more columns than the import's limit.
        case tooManyColumns(limit: Int)
        /// The extra columns of all lessons together pass the import's limit, in bytes.
        case extrasTooLarge(limit: Int)
        /// The data is not UTF-8 text.
        case notUTF8
    }

    /// What was wrong.
    public var kind: Kind
    /// The 1-based record number (the header is record 1).
    public var row: Int
    /// The 1-based column, when the problem is in one field.
    public var column: Int?

    /// Creates an error.
    public init(_ kind: Kind, row: Int, column: Int? = nil) {
        self.kind = kind
        self.row = row
        self.column = column
    }

    /// A sentence naming the row and column.
    public var description: String {
        "row \(row)\(column.map { ", column \($0)" } ?? ""): \(kind)"
    }
}

/// Reads CSV by RFC 4180: quoted fields with escaped quotes and embedded line breaks, CRLF or LF
/// line endings, an optional UTF-8 byte order mark, and an optional final line break.
public struct CSVReader: Sendable {
    /// The field separator (a comma by default).
    public var separator: UInt8
    /// The longest field accepted, in bytes.
    public var maximumFieldLength: Int
    /// The most fields in one record.
    public var maximumFieldCount: Int
    /// The most records read (blank lines do not count); one more is a
    /// ``CSVError/Kind/tooManyRecords(limit:)``.
    public var maximumRecordCount: Int

    /// Creates a reader.
    ///
    /// - Parameters:
    ///   - separator: The field separator, an ASCII character (a comma by default).
    ///   - maximumFieldLength: The longest field accepted, in bytes (1 MiB).
    ///   - maximumFieldCount: The most fields in one record (10,000).
    ///   - maximumRecordCount: The most records read (1,000,000), which bounds the memory
    ///     ``records(_:)`` needs whatever the data's size.
    public init(
        separator: Character = ",", maximumFieldLength: Int = 1 << 20, maximumFieldCount: Int = 10_000,
        maximumRecordCount: Int = 1_000_000
    ) {
        self.separator = separator.asciiValue ?? UInt8(ascii: ",")
        self.maximumFieldLength = maximumFieldLength
        self.maximumFieldCount = maximumFieldCount
        self.maximumRecordCount = maximumRecordCount
    }

    /// Reads every record of `data`.
    ///
    /// - Throws: ``CSVError`` for the first malformed record (an unclosed quote or text after
    ///   a closing quote), with its row and column.
    /// - Complexity: O(*n*) in the data's size.
    public func records(_ data: Data) throws(CSVError) -> [[String]] {
        var records: [[String]] = []
        try forEachRecord(data) { record, _ in records.append(record) }
        return records
    }

    /// Calls `body` with each record and its 1-based row number.
    public func forEachRecord(_ data: Data, _ body: ([String], Int) throws(CSVError) -> Void) throws(CSVError) {
        var failure: CSVError?
        data.withUnsafeBytes { raw in
            let bytes = raw.bindMemory(to: UInt8.self)
            do throws(CSVError) {
                try scan(bytes, body)
            } catch {
                failure = error
            }
        }
        if let failure { throw failure }
    }

    private func scan(_ bytes: UnsafeBufferPointer<UInt8>, _ body: ([String], Int) throws(CSVError) -> Void)
        throws(CSVError)
    {
        let quote = UInt8(ascii: "\"")
        let newline = UInt8(ascii: "\n")
        let carriageReturn = UInt8(ascii: "\r")
        var index = 0
        if bytes.count >= 3, bytes[0] == 0xEF, bytes[1] == 0xBB, bytes[2] == 0xBF { index = 3 }
        var row = 1
        var recordCount = 0
        var record: [String] = []
        var field: [UInt8] = []
        var fieldIsQuoted = false
        func decoded(_ value: [UInt8]) throws(CSVError) -> String {
            // Decoding repairs invalid UTF-8, so a repaired string differs from the bytes (and
            // `String(validating:as:)` needs iOS 18).
            let text = String(decoding: value, as: UTF8.self)
            guard text.utf8.elementsEqual(value) else {
                throw CSVError(.notUTF8, row: row, column: record.count + 1)
            }
            return text
        }
        func endField() throws(CSVError) {
            record.append(try decoded(field))
            field.removeAll(keepingCapacity: true)
            fieldIsQuoted = false
            guard record.count <= maximumFieldCount else {
                throw CSVError(.tooLong(limit: maximumFieldCount), row: row)
            }
        }
        func endRecord() throws(CSVError) {
            try endField()
            // A blank line is not a record.
            if !(record.count == 1 && record[0].isEmpty) {
                recordCount += 1
                guard recordCount <= maximumRecordCount else {
                    throw CSVError(.tooManyRecords(limit: maximumRecordCount), row: row)
                }
                try body(record, row)
            }
            record.removeAll(keepingCapacity: true)
            row += 1
        }
        while index < bytes.count {
            let byte = bytes[index]
            if byte == quote && field.isEmpty && !fieldIsQuoted {
                // A quoted field: read to the closing quote; "" is an escaped quote.
                fieldIsQuoted = true
                index += 1
                var closed = false
                while index < bytes.count {
                    let inner = bytes[index]
                    if inner == quote {
                        if index + 1 < bytes.count, bytes[index + 1] == quote {
                            field.append(quote)
                            index += 2
                            continue
                        }
                        closed = true
                        index += 1
                        break
                    }
                    field.append(inner)
                    guard field.count <= maximumFieldLength else {
                        throw CSVError(.tooLong(limit: maximumFieldLength), row: row, column: record.count + 1)
                    }
                    index += 1
                }
                guard closed else { throw CSVError(.unterminatedQuote, row: row, column: record.count + 1) }
                if index < bytes.count {
                    let next = bytes[index]
                    let atEnd =
                        next == separator || next == newline
                        || (next == carriageReturn && (index + 1 == bytes.count || bytes[index + 1] == newline))
                    guard atEnd else { throw CSVError(.textAfterQuote, row: row, column: record.count + 1) }
                }
                continue
            }
            switch byte {
            case separator:
                try endField()
            case newline:
                try endRecord()
            case carriageReturn where index + 1 < bytes.count && bytes[index + 1] == newline:
                break
            case carriageReturn where index + 1 == bytes.count:
                break
            default:
                field.append(byte)
                guard field.count <= maximumFieldLength else {
                    throw CSVError(.tooLong(limit: maximumFieldLength), row: row, column: record.count + 1)
                }
            }
            index += 1
        }
        // The last record may lack its line break.
        if !field.isEmpty || !record.isEmpty || fieldIsQuoted { try endRecord() }
    }
}
