import Downloads
import Foundation
import TestSupport
import Testing

/// Every ffmpeg-made lesson, downloaded by ``MediaDownloader/downloadLesson(from:to:)`` as an app
/// would, and compared frame by frame with what ffmpeg's demuxers read from its source
/// (`packets.json`): the one file plays the source's frames, decoded with the source's
/// parameter sets, with sound and picture where the source puts them.
@Suite("Downloaded lessons against their sources, frame by frame")
struct LessonFramesTests {
    static let lessons = [
        "aes-explicit-iv", "aes-fmp4-init", "aes-implicit-iv", "aes-rotation", "cmaf", "cmaf-ac3", "cmaf-disc",
        "cmaf-eac3", "cmaf-heaac", "cmaf-heaacv2", "cmaf-hevc", "cmaf-mp3", "cmaf-renditions-disc", "disc-encoders",
        "disc-rates", "disc-same", "fmp4-base-offset",
        "multi-audio", "packed-aac", "packed-ac3", "packed-beside-video", "packed-eac3", "packed-heaac", "packed-mp3",
        "ts-ac3", "ts-captions", "ts-eac3", "ts-heaac", "ts-heaacv2", "ts-hevc-cra", "ts-mp3", "ts-opengop",
        "ts-renditions-disc", "webvtt",
    ]

    /// Lesson `name` served in memory, the transport it is served on, and a downloader over it
    /// (two transfers).
    static func serving(
        _ name: String
    ) throws -> (ServedLesson, InMemoryHTTPTransport<ManualClock>, MediaDownloader<ManualClock>) {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let lesson = try ServedLesson(name)
        lesson.serve(on: transport)
        return (
            lesson, transport,
            MediaDownloader(engine: DownloadEngine(concurrency: 2, clock: clock, transport: transport))
        )
    }

    @Test(
        "RFC 8216 §6.3 and ISO/IEC 14496-12 §8.6: a downloaded lesson holds its source's frames in order, and its drift at the end is the one stated",
        arguments: lessons)
    func downloadedLesson(name: String) async throws {
        let (lesson, _, downloader) = try Self.serving(name)
        let folder = temporaryFolder("frames-\(name)")
        defer { try? FileManager.default.removeItem(at: folder) }
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        )
        .result()
        let file = try MP4Inspector(url: result.file)
        try LessonComparison.expectSameFrames(file, as: name)
        guard let stated = LessonComparison.drifts.first(where: { $0.name == name }) else {
            let measured = try? LessonComparison.drift(file, as: name).seconds * 1_000_000
            #expect(
                file.tracks("vide").isEmpty || file.tracks("soun").isEmpty,
                "\(name): no drift stated (measured \(measured.map { "\($0) µs" } ?? "none"))")
            return
        }
        let drift = try LessonComparison.drift(file, as: name)
        #expect(
            abs(drift.seconds * 1_000_000 - Double(stated.keepingTimestamps)) < 1,
            "\(name): drift \(drift.seconds * 1_000_000) µs, stated \(stated.keepingTimestamps) µs")
    }

    @Test(
        "ISO/IEC 13818-1 §2.4.4.9: a lesson whose program map declares DTS audio fails as unsupported, with nothing written"
    )
    func declaredDTSIsRefused() async throws {
        let (lesson, transport, downloader) = try Self.serving("ts-ac3")
        // The same segments, their program maps declaring DTS (0x82) where they declare AC-3 (0x81).
        for path in lesson.files.keys where path.hasSuffix(".ts") {
            let (bytes, patched) = Self.declaringDTS(try #require(lesson.files[path]))
            #expect(patched > 0, "\(path): no AC-3 entry found")
            transport.stub(lesson.base.appendingPathComponent(path), reply: .resource(bytes))
        }
        let folder = temporaryFolder("frames-dts")
        defer { try? FileManager.default.removeItem(at: folder) }
        do {
            _ = try await downloader.downloadLesson(from: lesson.entry, to: folder.appendingPathComponent("lesson"))
                .result()
            Issue.record("a lesson with DTS audio was downloaded")
        } catch {
            #expect(error.category == .unsupported, "\(error)")
            #expect("\(error)".contains("0x82") || "\(error)".lowercased().contains("dts"), "\(error)")
        }
        let left = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        #expect(left.filter { !$0.hasPrefix(".") }.isEmpty, "\(left)")
    }

    /// `segment` with every program map entry of stream type 0x81 (AC-3) changed to 0x82 (DTS),
    /// and how many were changed.
    static func declaringDTS(_ segment: Data) -> (Data, Int) {
        var bytes = [UInt8](segment)
        let starts = stride(from: 0, through: bytes.count - 188, by: 188).filter {
            // A PMT section at the start of the payload: table_id 2 after a zero pointer field.
            bytes[$0 + 1] & 0x40 != 0 && bytes[$0 + 3] & 0x30 == 0x10 && bytes[$0 + 4] == 0 && bytes[$0 + 5] == 0x02
        }
        var patched = 0
        for start in starts {
            let sectionLength = Int(bytes[start + 6] & 0x0F) << 8 | Int(bytes[start + 7])
            let entriesEnd = min(start + 8 + sectionLength - 4, start + 188)
            let programInfo = Int(bytes[start + 15] & 0x0F) << 8 | Int(bytes[start + 16])
            var entry = start + 17 + programInfo
            while entry + 5 <= entriesEnd {
                if bytes[entry] == 0x81 {
                    bytes[entry] = 0x82
                    patched += 1
                }
                entry += 5 + (Int(bytes[entry + 3] & 0x0F) << 8 | Int(bytes[entry + 4]))
            }
        }
        return (Data(bytes), patched)
    }
}

extension LessonFramesTests {
    /// `segment` split into its program tables (the first PAT and PMT packets) and its other
    /// packets, every PAT and PMT left out.
    static func splitTables(_ segment: Data) -> (tables: Data, rest: Data) {
        let bytes = [UInt8](segment)
        var tables: [UInt8] = []
        var rest: [UInt8] = []
        var mapPIDs: Set<Int> = []
        for start in stride(from: 0, through: bytes.count - 188, by: 188) {
            let packet = Array(bytes[start..<(start + 188)])
            let pid = Int(packet[1] & 0x1F) << 8 | Int(packet[2])
            if pid == 0 {
                // The PAT's first program (ISO/IEC 13818-1 §2.4.4.3): its PMT's PID.
                let section = 5 + Int(packet[4])
                mapPIDs.insert(Int(packet[section + 10] & 0x1F) << 8 | Int(packet[section + 11]))
            }
            if pid == 0 || mapPIDs.contains(pid) {
                if tables.count < 2 * 188 { tables += packet }
            } else {
                rest += packet
            }
        }
        return (Data(tables), Data(rest))
    }

    @Test(
        "RFC 8216 §3.2, §4.3.2.5: transport-stream segments whose PAT and PMT are only in an EXT-X-MAP download with every frame of the source, and the drift at the end stated (0 µs)"
    )
    func transportStreamTablesInMap() async throws {
        // The fixture is ts-ac3 with its tables moved into the map: the same packets, split.
        let source = try ServedLesson("ts-ac3")
        let (lesson, _, downloader) = try Self.serving("ts-map")
        let (tables, first) = Self.splitTables(try #require(source.files["seg0.ts"]))
        let (_, second) = Self.splitTables(try #require(source.files["seg1.ts"]))
        #expect(tables.count == 2 * 188)
        #expect(lesson.files["init-tables.ts"] == tables)
        #expect(lesson.files["seg0.ts"] == first)
        #expect(lesson.files["seg1.ts"] == second)
        #expect(Self.splitTables(first).tables.isEmpty)
        let playlist = String(decoding: try #require(lesson.files["index.m3u8"]), as: UTF8.self)
        #expect(playlist.contains("#EXT-X-MAP:URI=\"init-tables.ts\"\n#EXTINF:1.000000,\nseg0.ts"))
        let folder = temporaryFolder("frames-ts-map")
        let result = try await downloader.downloadLesson(
            from: lesson.entry, to: folder.appendingPathComponent("lesson")
        )
        .result()
        let file = try MP4Inspector(url: result.file)
        try LessonComparison.expectSameFrames(file, as: "ts-ac3")
        // Its drift at the end is ts-ac3's, as stated for that lesson: 0 µs.
        let stated = try #require(LessonComparison.drifts.first { $0.name == "ts-ac3" })
        let drift = try LessonComparison.drift(file, as: "ts-ac3")
        #expect(abs(drift.seconds * 1_000_000 - Double(stated.keepingTimestamps)) < 1)
        #expect(abs(drift.seconds) < drift.audioFrame)
    }
}
