import Foundation

/// Where a background session's finished files land, each with a record of the event it came
/// with, so that an event the app received but did not record before it died is not lost.
///
/// The system deletes a finished task's file when `didFinishDownloadingTo` returns, and
/// considers the event delivered then: a process killed between that moment and the saving of
/// its journal would leave the request waiting forever for an event that never comes again.
/// So the file is moved to `landing/<uuid>` and the event written beside it as
/// `landing/<uuid>.event` (after the move, atomically); the next process to start reads every
/// such pair left over (``leftovers(in:)``) and records it as if the event had just arrived.
enum BackgroundLanding {
    private struct Record: Codable {
        var taskDescription: String
        var statusCode: Int
        var headers: [String: String]
    }

    private static let suffix = ".event"

    /// Moves `file` into `landing` with a record of the event, and returns the event as the app
    /// records it (its file the landed one).
    ///
    /// - Throws: The file operation's error; nothing is left in `landing` then.
    static func land(
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
    static func leftovers(in landing: URL) -> [BackgroundTransferEvent] {
        let manager = FileManager.default
        let names = ((try? manager.contentsOfDirectory(atPath: landing.path)) ?? []).sorted()
        var events: [BackgroundTransferEvent] = []
        for name in names where !name.hasSuffix(suffix) && !name.hasPrefix(".") {
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
        return events
    }

    /// Deletes a landed file and its record (once the event is recorded).
    static func remove(_ file: URL) {
        try? FileManager.default.removeItem(at: file)
        try? FileManager.default.removeItem(at: recordFile(of: file))
    }

    private static func recordFile(of file: URL) -> URL {
        file.deletingLastPathComponent().appendingPathComponent(file.lastPathComponent + suffix)
    }
}
