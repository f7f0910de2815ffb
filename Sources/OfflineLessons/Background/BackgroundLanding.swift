import Downloads
package import Foundation

/// Where a background session's finished files land, each with a record of the event it came
/// with, so that an event the app received but did not record before it died is not lost.
///
/// The system deletes a finished task's file when `didFinishDownloadingTo` returns, and
/// considers the event delivered then: a process killed between that moment and the saving of
/// its journal would leave the request waiting forever for an event that never comes again.
/// So the file is moved to `landing/<uuid>` and the event written beside it as
/// `landing/<uuid>.event` (after the move, atomically); the next process to start reads every
/// such pair left over (``leftovers(in:)``) and records it as if the event had just arrived.
///
/// A task that ends without a file (`didCompleteWithError`: a lost connection, a cancel, a
/// force-quit) is delivered once too: its event is written as `landing/<uuid>.failure`, with
/// its resume data, and removed once recorded (``removeFailure(of:in:)``).
package enum BackgroundLanding {
    private struct Record: Codable {
        var taskDescription: String
        var statusCode: Int
        var headers: [String: String]
    }

    private static let suffix = ".event"
    private static let failureSuffix = ".failure"

    /// A task's end without a file, as written in the landing folder.
    private struct FailureRecord: Codable {
        var taskDescription: String
        /// `forceQuit`, `cancelled` or `network`.
        var kind: String
        var code: Int?
        var resumeData: Data?
    }

    /// Writes a record of task `taskDescription`'s end with `failure` into `landing`, so that
    /// a process that dies before recording it finds it at its next start.
    ///
    /// - Throws: The file operation's error.
    package static func landFailure(
        of taskDescription: String, _ failure: BackgroundTransferFailure, resumeData: Data?, in landing: URL
    ) throws {
        let record: FailureRecord
        switch failure {
        case .forceQuit: record = FailureRecord(taskDescription: taskDescription, kind: "forceQuit")
        case .cancelled: record = FailureRecord(taskDescription: taskDescription, kind: "cancelled")
        case .network(let code): record = FailureRecord(taskDescription: taskDescription, kind: "network", code: code)
        }
        var kept = record
        kept.resumeData = resumeData
        try FileManager.default.createDirectory(at: landing, withIntermediateDirectories: true)
        try StateFileWriting.write(
            JSONEncoder().encode(kept), to: landing.appendingPathComponent(UUID().uuidString + failureSuffix))
    }

    /// Removes the failure records of task `taskDescription` (its event is recorded).
    ///
    /// - Complexity: O(*f*) file reads for the *f* failure records in `landing` (few: one per
    ///   task that failed and is not recorded yet).
    package static func removeFailure(of taskDescription: String, in landing: URL) {
        for (file, record) in failureRecords(in: landing) where record.taskDescription == taskDescription {
            try? FileManager.default.removeItem(at: file)
        }
    }

    private static func failureRecords(in landing: URL) -> [(URL, FailureRecord)] {
        let names = ((try? FileManager.default.contentsOfDirectory(atPath: landing.path)) ?? []).sorted()
        return names.filter { $0.hasSuffix(failureSuffix) }.compactMap { name in
            let file = landing.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: file),
                let record = try? JSONDecoder().decode(FailureRecord.self, from: data)
            else {
                try? FileManager.default.removeItem(at: file)
                return nil
            }
            return (file, record)
        }
    }

    /// Moves `file` into `landing` with a record of the event, and returns the event as the app
    /// records it (its file the landed one).
    ///
    /// - Throws: The file operation's error; nothing is left in `landing` then.
    package static func land(
        _ file: URL, in landing: URL, taskDescription: String, response: BackgroundTransferResponse
    ) throws -> BackgroundTransferEvent {
        let manager = FileManager.default
        try manager.createDirectory(at: landing, withIntermediateDirectories: true)
        let destination = landing.appendingPathComponent(UUID().uuidString)
        try manager.moveItem(at: file, to: destination)
        do {
            let record = Record(
                taskDescription: taskDescription, statusCode: response.statusCode, headers: response.headers)
            try StateFileWriting.write(JSONEncoder().encode(record), to: recordFile(of: destination))
        } catch {
            try? manager.removeItem(at: destination)
            throw error
        }
        return .finished(taskDescription: taskDescription, response: response, file: destination)
    }

    /// The events whose files are still in `landing` (a process died before it recorded them),
    /// oldest name first; a file without its record, or a record without its file, is deleted.
    ///
    /// - Complexity: O(*n*) file reads for *n* files in `landing`.
    package static func leftovers(in landing: URL) -> [BackgroundTransferEvent] {
        let manager = FileManager.default
        let names = ((try? manager.contentsOfDirectory(atPath: landing.path)) ?? []).sorted()
        var events: [BackgroundTransferEvent] = []
        for name in names where !name.hasSuffix(suffix) && !name.hasSuffix(failureSuffix) && !name.hasPrefix(".") {
            let file = landing.appendingPathComponent(name)
            guard let data = try? Data(contentsOf: recordFile(of: file)),
                let record = try? JSONDecoder().decode(Record.self, from: data)
            else {
                try? manager.removeItem(at: file)
                continue
            }
            events.append(
                .finished(
                    taskDescription: record.taskDescription,
                    response: BackgroundTransferResponse(statusCode: record.statusCode, headers: record.headers),
                    file: file))
        }
        for name in names where name.hasSuffix(suffix) {
            let file = landing.appendingPathComponent(String(name.dropLast(suffix.count)))
            if !manager.fileExists(atPath: file.path) {
                try? manager.removeItem(at: landing.appendingPathComponent(name))
            }
        }
        for (_, record) in failureRecords(in: landing) {
            let failure: BackgroundTransferFailure =
                switch record.kind {
                case "forceQuit": .forceQuit
                case "cancelled": .cancelled
                default: .network(code: record.code ?? URLError.Code.unknown.rawValue)
                }
            events.append(
                .failed(taskDescription: record.taskDescription, failure: failure, resumeData: record.resumeData))
        }
        return events
    }

    /// Deletes a landed file and its record (once the event is recorded).
    package static func remove(_ file: URL) {
        try? FileManager.default.removeItem(at: file)
        try? FileManager.default.removeItem(at: recordFile(of: file))
    }

    private static func recordFile(of file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + suffix)
    }
}
