import Foundation
import MediaContainers
import TestSupport
import Testing

/// The segment readers share one decoder contract (a push decoder over a byte cursor, one
/// driver owning the bytes of an unfinished unit): whatever the boundaries of the pieces a
/// segment arrives in, they read the same samples, with the same errors at the same offsets.
@Suite("Segment readers read the same whatever the pieces")
struct ByteStreamDecoderTests {
    /// A reader of one kind of segment, fed whole or in pieces.
    enum Reader {
        case transportStream(TransportStreamReader)
        case packedAudio(PackedAudioReader)
        case fragmented(FragmentedMP4Reader)

        init(for segment: Lessons.Segment) throws {
            if let initialization = try segment.initializationData() {
                self = .fragmented(try FragmentedMP4Reader(initialization: initialization))
            } else if segment.path.hasSuffix(".ts") {
                self = .transportStream(TransportStreamReader())
            } else {
                self = .packedAudio(PackedAudioReader())
            }
        }

        mutating func read(_ data: Data) throws -> [MediaSample] {
            switch self {
            case .transportStream(var reader):
                defer { self = .transportStream(reader) }
                return try reader.read(data)
            case .packedAudio(var reader):
                defer { self = .packedAudio(reader) }
                return try reader.read(data)
            case .fragmented(var reader):
                defer { self = .fragmented(reader) }
                return try reader.read(data)
            }
        }

        mutating func finish() throws -> [MediaSample] {
            switch self {
            case .transportStream(var reader):
                defer { self = .transportStream(reader) }
                return try reader.finish()
            case .packedAudio(var reader):
                defer { self = .packedAudio(reader) }
                return try reader.finish()
            case .fragmented(var reader):
                defer { self = .fragmented(reader) }
                return try reader.finish()
            }
        }
    }

    /// A sample's every field, comparable.
    struct Fields: Hashable {
        var stream: String
        var description: SampleDescription
        var data: Data
        var decodeTime: Int64
        var presentationTime: Int64
        var duration: Int64?
        var isSync: Bool

        init(_ sample: MediaSample) {
            stream = sample.stream.description
            description = sample.description
            data = sample.data
            decodeTime = sample.decodeTime
            presentationTime = sample.presentationTime
            duration = sample.duration
            isSync = sample.isSync
        }
    }

    /// What a read gives: the samples, or the error's description.
    enum Outcome: Hashable {
        case success([Fields])
        case failure(String)
    }

    /// Reads `data` in pieces of the sizes `sizes` gives, then finishes.
    static func read(_ data: Data, segment: Lessons.Segment, sizes: () -> Int) -> Outcome {
        do {
            var reader = try Reader(for: segment)
            var samples: [MediaSample] = []
            var start = data.startIndex
            while start < data.endIndex {
                let end = min(start + max(sizes(), 1), data.endIndex)
                samples += try reader.read(data[start..<end])
                start = end
            }
            samples += try reader.finish()
            return .success(samples.map(Fields.init))
        } catch {
            return .failure("\(error)")
        }
    }

    /// The first two segments of every media playlist of every fixture lesson.
    static let segments: [String] = {
        let folder = Lessons.loader.folder
        let names = (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? []
        var found: [String] = []
        for name in names.sorted() where name != "bench-720p" && !name.contains(".") {
            for playlist in (try? Lessons.playlists(name)) ?? [] {
                let count = ((try? Lessons.segments(playlist)) ?? []).count
                for index in 0..<min(count, 2) { found.append("\(playlist) \(index)") }
            }
        }
        return found
    }()

    @Test("the fixture segments are found")
    func segmentsFound() {
        #expect(Self.segments.count >= 60)
    }

    @Test(
        "seeded: pieces of random sizes, one-byte pieces included, read as the whole segment does", arguments: segments)
    func sameSamples(name: String) throws {
        let parts = name.split(separator: " ")
        let all = try Lessons.segments(String(parts[0]))
        let index = try #require(Int(parts[1]))
        try #require(all.indices.contains(index))
        let segment = all[index]
        let data = try segment.data()
        let whole = Self.read(data, segment: segment) { data.count }
        if case .success(let samples) = whole { #expect(!samples.isEmpty, "\(name)") }
        for seed in UInt64(0)..<3 {
            var generator = SplitMix64(seed: seed ^ UInt64(name.utf8.count))
            let maximum = [3, 200, 70_000][Int(seed)]
            let pieces = Self.read(data, segment: segment) { Int.random(in: 1...maximum, using: &generator) }
            #expect(pieces == whole, "\(name), seed \(seed)")
        }
    }

    @Test(
        "a damaged segment fails the same way, at the same offset, whatever the pieces",
        arguments: ["ts-heaac/index.m3u8 0", "packed-aac/index.m3u8 0", "cmaf/video/index.m3u8 0"])
    func sameErrors(name: String) throws {
        let parts = name.split(separator: " ")
        let segments = try Lessons.segments(String(parts[0]))
        let segment = try #require(segments.first)
        var data = try segment.data()
        // A run of zeros through the middle: lost sync, a bad frame header, a bad box.
        let middle = data.startIndex + data.count / 2
        data.replaceSubrange(middle..<min(middle + 400, data.endIndex), with: Data(count: 400))
        let whole = Self.read(data, segment: segment) { data.count }
        var generator = SplitMix64(seed: 7)
        let pieces = Self.read(data, segment: segment) { Int.random(in: 1...500, using: &generator) }
        #expect(pieces == whole)
    }
}
