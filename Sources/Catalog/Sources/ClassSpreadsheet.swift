public import Foundation

/// The dance-class spreadsheet: `title,instructor,level,song,videoUrl,thumbnailSlug`.
///
/// The sheet has no id column, and every row has the same video URL, so an id is derived from
/// the row's content: a 64-bit FNV-1a hash (hex) of title, instructor, level, song and thumbnail
/// slug, separated by U+001F. The same row re-imported gets the same id, so progress and
/// downloads keyed by it survive; a row that repeats another exactly gets `-2`, `-3`… in the
/// order of appearance. Editing any of those fields makes a new lesson, by design: it is one.
public enum ClassSpreadsheet {
    /// The lessons read, and the rows skipped.
    public struct ImportResult: Sendable, Hashable {
        /// The lessons, in the sheet's order.
        public var lessons: [Lesson]
        /// The rows skipped, with why (empty unless the policy is ``BadItemPolicy/skip``).
        public var skipped: [CSVError]
    }

    /// The columns the sheet must have.
    public static let requiredColumns = ["title", "instructor", "level", "videoUrl"]

    /// Reads the sheet.
    ///
    /// - Parameters:
    ///   - data: The CSV bytes.
    ///   - policy: Whether a bad row stops the import or is skipped and reported.
    ///   - thumbnailBase: Where thumbnail slugs live; the slug is kept as is when `nil`.
    ///   - maximumRowCount: The most rows after the header, good or skipped (100,000). A lesson
    ///     costs about 0.5 KB in memory besides its extra columns; one more row is
    ///     ``CSVError/Kind/tooManyRecords(limit:)``.
    ///   - maximumColumnCount: The most columns the header may name (256); more is
    ///     ``CSVError/Kind/tooManyColumns(limit:)``, before any row is read.
    ///   - maximumExtraBytes: The most bytes the extra columns of all lessons may hold together,
    ///     each value counted with its name and 32 bytes of bookkeeping (16 MiB); more is
    ///     ``CSVError/Kind/extrasTooLarge(limit:)``. With the row limit, this bounds an import at
    ///     about 66 MB whatever the file's shape.
    /// - Throws: ``CSVError`` for a malformed file, a missing column, too many rows or columns,
    ///   extra columns past their budget, or (when failing) a bad row.
    /// - Complexity: O(*n*) in the file's size.
    public static func lessons(
        from data: Data, policy: BadItemPolicy = .fail, thumbnailBase: URL? = nil, maximumRowCount: Int = 100_000,
        maximumColumnCount: Int = 256, maximumExtraBytes: Int = 16 << 20
    )
        throws(CSVError)
        -> ImportResult
    {
        var header: [String]?
        var columns: [String: Int] = [:]
        var lessons: [Lesson] = []
        var skipped: [CSVError] = []
        var seen: [String: Int] = [:]
        var rowCount = 0
        var extraBytes = 0
        var extrasOverflowRow = 0
        // The reader stops a record as soon as it is wider than the header may be, so no row is
        // ever built wider than that.
        let widest = max(maximumColumnCount, 1) + 1
        let reader = CSVReader(maximumFieldCount: widest, maximumRecordCount: .max)
        do throws(CSVError) {
            try reader.forEachRecord(data) { (record: [String], row: Int) throws(CSVError) in
                guard let names = header else {
                    guard record.count <= maximumColumnCount else {
                        throw CSVError(.tooManyColumns(limit: maximumColumnCount), row: row)
                    }
                    let trimmed = record.map { $0.trimmingCharacters(in: .whitespaces) }
                    for (index, name) in trimmed.enumerated() where columns[name] == nil { columns[name] = index }
                    for required in requiredColumns where columns[required] == nil {
                        throw CSVError(.missingColumn(required), row: row)
                    }
                    header = trimmed
                    return
                }
                rowCount += 1
                guard rowCount <= maximumRowCount else {
                    throw CSVError(.tooManyRecords(limit: maximumRowCount), row: row)
                }
                do throws(CSVError) {
                    guard record.count == names.count else {
                        throw CSVError(.wrongFieldCount(expected: names.count, found: record.count), row: row)
                    }
                    func value(_ name: String) -> String? {
                        columns[name].map { record[$0].trimmingCharacters(in: .whitespaces) }.flatMap {
                            $0.isEmpty ? nil : $0
                        }
                    }
                    for required in ["title", "videoUrl"] where value(required) == nil {
                        throw CSVError(.emptyField(column: required), row: row, column: (columns[required] ?? 0) + 1)
                    }
                    let title = value("title") ?? ""
                    var extra: [String: String] = [:]
                    for (index, name) in names.enumerated()
                    where !["title", "instructor", "level", "videoUrl", "thumbnailSlug"].contains(name) {
                        extra[name] = record[index]
                        extraBytes += name.utf8.count + record[index].utf8.count + 32
                    }
                    // A budget for all lessons: not a bad row to skip, the file's shape.
                    if extraBytes > maximumExtraBytes {
                        extrasOverflowRow = row
                        throw CSVError(.extrasTooLarge(limit: maximumExtraBytes), row: row)
                    }
                    let slug = value("thumbnailSlug")
                    let base = stableID([
                        title, value("instructor") ?? "", value("level") ?? "", value("song") ?? "", slug ?? "",
                    ])
                    let occurrence = (seen[base] ?? 0) + 1
                    seen[base] = occurrence
                    lessons.append(
                        Lesson(
                            id: occurrence == 1 ? base : "\(base)-\(occurrence)", title: title,
                            instructor: value("instructor"),
                            level: value("level"), mediaURL: value("videoUrl").flatMap(URL.init(string:)),
                            thumbnail: slug.map { thumbnailBase?.appendingPathComponent($0).absoluteString ?? $0 },
                            extra: extra))
                } catch {
                    guard policy == .skip, extrasOverflowRow != row else { throw error }
                    skipped.append(error)
                }
            }
        } catch {
            // The header itself was too wide for the reader: say so in the import's terms.
            if error.row == 1, case .tooLong(let limit) = error.kind, limit == widest {
                throw CSVError(.tooManyColumns(limit: maximumColumnCount), row: 1)
            }
            throw error
        }
        return ImportResult(lessons: lessons, skipped: skipped)
    }

    /// FNV-1a 64 of the fields joined by U+001F, as 16 hex digits.
    static func stableID(_ fields: [String]) -> String {
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in fields.joined(separator: "\u{1F}").utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        let hex = String(hash, radix: 16)
        return String(repeating: "0", count: 16 - hex.count) + hex
    }
}
