import Foundation
import TestSupport
import Testing

@testable import Downloads
@testable import OfflineLessons

/// The hand-over of a download's remaining parts to a background session: its tasks' labels,
/// which a relaunched process reads back, and the merging of adjacent byte ranges into one
/// request, whose body is split back into the parts when the task finishes.
@Suite("Background hand-over batches")
struct BackgroundBatchTests {
    static let file = URL(literal: "https://media.example/lesson/main.ts")
    static let other = URL(literal: "https://media.example/lesson/audio.aac")

    static func part(_ index: Int, _ url: URL = file, length: UInt64, at offset: UInt64) -> BackgroundBatch.Part {
        BackgroundBatch.Part(
            index: index, part: DownloadPart(url: url, byteRange: ByteRange(length: length, offset: offset)),
            expectedBytes: length)
    }

    @Test(
        "a label reads back as written: runs of parts, and a key with spaces, slashes and non-ASCII text",
        arguments: [
            BackgroundTaskLabel(download: "lesson-1", parts: [0]),
            BackgroundTaskLabel(download: "a course/lesson 2 — ça", parts: [3, 4, 5, 9, 11, 12]),
            BackgroundTaskLabel(download: "%41 %", parts: [7, 2, 3]),
            BackgroundTaskLabel(download: "lesson-1", parts: [0], generation: 1),
            BackgroundTaskLabel(download: "a course/lesson 2 — ça", parts: [3, 4, 5, 9], generation: 4_294_967_296),
        ])
    func labelRoundTrip(label: BackgroundTaskLabel) throws {
        let text = label.description
        #expect(
            !text.contains("\n") && text.split(separator: " ").count == (label.generation == nil ? 3 : 4), "\(text)")
        #expect(BackgroundTaskLabel(parsing: text) == label)
    }

    @Test("the labels earlier versions wrote are still read, with no generation; today's carry the hand-over's")
    func labelVersions() {
        #expect(
            BackgroundTaskLabel(parsing: "mediacore/1 3-5,9 lesson%201")
                == BackgroundTaskLabel(download: "lesson 1", parts: [3, 4, 5, 9]))
        #expect(
            BackgroundTaskLabel(parsing: "mediacore/2 17 3-5,9 lesson%201")
                == BackgroundTaskLabel(download: "lesson 1", parts: [3, 4, 5, 9], generation: 17))
        #expect(
            BackgroundTaskLabel(download: "lesson", parts: [1, 2], generation: 8).description
                == "mediacore/2 8 1-2 lesson")
    }

    @Test(
        "another library's task, or a damaged label, reads as no label",
        arguments: [
            nil, "", "Downloading lesson 3", "mediacore/1", "mediacore/1 1 ", "mediacore/2 1 key", "mediacore/1 x key",
            "mediacore/1 5-3 key", "mediacore/1 -1 key", "mediacore/1 1,,2 key", "mediacore/1 1 key extra",
            "mediacore/1 0-99999999999 key", "mediacore/1 1 %ZZ", "mediacore/2 x 1 key", "mediacore/2 -1 1 key",
            "mediacore/2 1 1 key extra", "mediacore/2 99999999999999999999 1 key", "mediacore/3 1 1 key",
        ])
    func foreignLabels(text: String?) {
        #expect(BackgroundTaskLabel(parsing: text) == nil)
    }

    @Test(
        "RFC 9110 §14.1.2: adjacent ranges of one resource become one range request; a gap, another file or a whole file does not merge"
    )
    func merging() throws {
        let parts = [
            Self.part(0, length: 100, at: 0),
            Self.part(1, length: 50, at: 100),
            Self.part(2, Self.other, length: 10, at: 0),
            Self.part(3, length: 70, at: 150),
            Self.part(4, length: 30, at: 300),  // a gap from 220 to 300
            BackgroundBatch.Part(index: 5, part: DownloadPart(url: Self.other), expectedBytes: nil),
        ]
        let requests = BackgroundBatch.requests(download: "lesson", parts: parts)
        #expect(requests.map(\.label.parts) == [[0, 1, 3], [2], [4], [5]])
        #expect(requests[0].byteRange == ByteRange(length: 220, offset: 0))
        #expect(requests[0].expectedBytesToReceive == 220 + BackgroundTransferRequest.headerAllowance)
        #expect(requests[2].byteRange == ByteRange(length: 30, offset: 300))
        #expect(requests[3].byteRange == nil && requests[3].expectedBytesToReceive == nil)
        #expect(requests.allSatisfy { BackgroundTaskLabel(parsing: $0.label.description) == $0.label })
    }

    @Test(
        "RFC 9110 §14.4: a 206 body splits at the parts' offsets from the range; a 200 body (Range ignored) at their own offsets"
    )
    func splitting() throws {
        let request = try #require(
            BackgroundBatch.requests(
                download: "lesson", parts: [Self.part(4, length: 10, at: 500), Self.part(5, length: 20, at: 510)]
            ).first)
        #expect(
            try BackgroundBatch.split(request, status: 206, contentRange: "bytes 500-529/2000", bodyLength: 30)
                == [0..<10, 10..<30])
        #expect(
            try BackgroundBatch.split(request, status: 200, contentRange: nil, bodyLength: 2_000) == [
                500..<510, 510..<530,
            ])
        #expect(throws: BackgroundBatch.SplitError.wrongLength(expected: 30, received: 29)) {
            try BackgroundBatch.split(request, status: 206, contentRange: nil, bodyLength: 29)
        }
        #expect(throws: BackgroundBatch.SplitError.otherRange("bytes 0-29/2000")) {
            try BackgroundBatch.split(request, status: 206, contentRange: "bytes 0-29/2000", bodyLength: 30)
        }
        #expect(throws: BackgroundBatch.SplitError.wrongLength(expected: 530, received: 529)) {
            try BackgroundBatch.split(request, status: 200, contentRange: nil, bodyLength: 529)
        }
        #expect(throws: BackgroundBatch.SplitError.unexpectedStatus(404)) {
            try BackgroundBatch.split(request, status: 404, contentRange: nil, bodyLength: 30)
        }
    }

    /// A task resumed from its resume data asks for the rest of its range (`Range` with
    /// `If-Range`): Apple does not document what its response then says, so the body is judged
    /// by what was asked and the length received.
    @Test(
        "RFC 9110 §15.3.7 and §14.4: a resumed task's 206 for the rest holds the whole range when its body is the range's length, the rest when it is the rest's",
        arguments: [
            // The range 500-529 asked, the remainder from 512 answered, the whole part delivered.
            (206, "bytes 512-529/2000", 30, ByteRange(length: 30, offset: 500), nil),
            // Only the remainder delivered: the bytes it holds.
            (206, "bytes 512-529/2000", 18, ByteRange(length: 18, offset: 512), nil),
            // The range asked, as asked.
            (206, "BYTES 500-529/*", 30, ByteRange(length: 30, offset: 500), nil),
            // Neither length: refused.
            (206, "bytes 512-529/2000", 20, nil, .wrongLength(expected: 30, received: 20)),
            // A range that does not end where the one asked ends, or starts before it.
            (206, "bytes 512-528/2000", 30, nil, .otherRange("bytes 512-528/2000")),
            (206, "bytes 499-529/2000", 31, nil, .otherRange("bytes 499-529/2000")),
            (206, "bytes 530-540/2000", 11, nil, .otherRange("bytes 530-540/2000")),
            // A 200: the whole resource, whatever was asked.
            (200, "", 2_000, nil, nil),
        ] as [(Int, String, UInt64, ByteRange?, BackgroundBatch.SplitError?)])
    func resumedRange(
        status: Int, contentRange: String, bodyLength: UInt64, held: ByteRange?, error: BackgroundBatch.SplitError?
    ) throws {
        let request = try #require(
            BackgroundBatch.requests(
                download: "lesson", parts: [Self.part(4, length: 10, at: 500), Self.part(5, length: 20, at: 510)]
            ).first)
        let header = contentRange.isEmpty ? nil : contentRange
        if let error {
            #expect(throws: error) {
                try BackgroundBatch.heldRange(of: request, status: status, contentRange: header, bodyLength: bodyLength)
            }
            return
        }
        #expect(
            try BackgroundBatch.heldRange(of: request, status: status, contentRange: header, bodyLength: bodyLength)
                == held)
        // A part the rest does not wholly hold is not in the body: the download's next run fetches it.
        let pieces = try BackgroundBatch.split(request, status: status, contentRange: header, bodyLength: bodyLength)
        if held == ByteRange(length: 18, offset: 512) {
            #expect(pieces == [nil, nil])
        } else if status == 200 {
            #expect(pieces == [500..<510, 510..<530])
        } else {
            #expect(pieces == [0..<10, 10..<30])
        }
    }

    @Test(
        "a resumed task of a whole resource: a 206 for the rest to its end holds the resource when its body is the complete length, the rest when it is the rest's"
    )
    func resumedWholeResource() throws {
        let request = BackgroundTransferRequest(
            url: Self.file, byteRange: nil, label: BackgroundTaskLabel(download: "lesson", parts: [0]),
            partRanges: [nil], expectedBodyBytes: 2_000)
        #expect(try BackgroundBatch.heldRange(of: request, status: 200, contentRange: nil, bodyLength: 2_000) == nil)
        #expect(
            try BackgroundBatch.heldRange(
                of: request, status: 206, contentRange: "bytes 700-1999/2000", bodyLength: 2_000)
                == nil)
        #expect(
            try BackgroundBatch.heldRange(
                of: request, status: 206, contentRange: "bytes 700-1999/2000", bodyLength: 1_300)
                == ByteRange(length: 1_300, offset: 700))
        #expect(throws: BackgroundBatch.SplitError.otherRange("bytes 700-1998/2000")) {
            try BackgroundBatch.heldRange(
                of: request, status: 206, contentRange: "bytes 700-1998/2000", bodyLength: 1_299)
        }
        #expect(throws: BackgroundBatch.SplitError.otherRange("")) {
            try BackgroundBatch.heldRange(of: request, status: 206, contentRange: nil, bodyLength: 2_000)
        }
        #expect(throws: BackgroundBatch.SplitError.wrongLength(expected: 2_000, received: 1_000)) {
            try BackgroundBatch.heldRange(
                of: request, status: 206, contentRange: "bytes 700-1999/2000", bodyLength: 1_000)
        }
    }

    @Test(
        "a task's network failure is retried only when a retry can mend it, in its own category: a lost connection is offline, a file the delegate could not move cannot be written",
        arguments: [
            (URLError.Code.networkConnectionLost, DownloadError.Category.offline, true),
            (.notConnectedToInternet, .offline, true),
            (.timedOut, .offline, true),
            (.cannotMoveFile, .notWritable, false),
            (.cannotWriteToFile, .notWritable, false),
            (.badServerResponse, .server, true),
            (.serverCertificateUntrusted, .server, false),
            (.userAuthenticationRequired, .accessDenied, false),
        ])
    func failureCategories(code: URLError.Code, category: DownloadError.Category, transient: Bool) {
        let failure = BackgroundTransfers.failure(ofNetworkCode: code.rawValue)
        #expect(failure.category == category)
        #expect(failure.transient == transient)
    }

    /// Random parts of a few resources, some adjacent, some not, some whole files.
    static func randomParts(seed: UInt64) -> [BackgroundBatch.Part] {
        var random = SplitMix64(seed: seed)
        let urls = [file, other, URL(literal: "https://cdn.example/x.mp4")]
        var offsets = [UInt64](repeating: 0, count: urls.count)
        var parts: [BackgroundBatch.Part] = []
        for index in 0..<Int(random.next() % 40 + 1) {
            let resource = Int(random.next() % UInt64(urls.count))
            if random.next() % 10 == 0 {
                parts.append(
                    BackgroundBatch.Part(index: index, part: DownloadPart(url: urls[resource]), expectedBytes: nil))
                continue
            }
            let length = random.next() % 1_000 + 1
            if random.next() % 3 == 0 { offsets[resource] += random.next() % 500 + 1 }  // a gap
            parts.append(Self.part(index, urls[resource], length: length, at: offsets[resource]))
            offsets[resource] += length
        }
        return parts
    }

    @Test(
        "laws: every part is in exactly one request, a request's parts tile its range, and no two requests could merge",
        arguments: 0..<200)
    func laws(seed: UInt64) throws {
        let parts = Self.randomParts(seed: seed)
        let requests = BackgroundBatch.requests(download: "d\(seed)", parts: parts)
        #expect(requests.flatMap(\.label.parts).sorted() == parts.map(\.index))
        let byIndex = Dictionary(uniqueKeysWithValues: parts.map { ($0.index, $0) })
        for request in requests {
            let members = request.label.parts.compactMap { byIndex[$0] }
            #expect(members.allSatisfy { $0.part.url == request.url })
            guard let range = request.byteRange else {
                #expect(members.count == 1 && members[0].part.byteRange == nil)
                continue
            }
            // The parts, in the label's order, tile the request's range without gap or overlap.
            var next = range.offset
            for member in members {
                let own = try #require(member.part.byteRange)
                #expect(own.offset == next)
                next = own.end
            }
            #expect(next == range.end)
            #expect(request.expectedBodyBytes == range.length)
            let pieces = try BackgroundBatch.split(request, status: 206, contentRange: nil, bodyLength: range.length)
            #expect(
                pieces.map { $0.map { $0.upperBound - $0.lowerBound } } == members.map { $0.part.byteRange?.length })
        }
        // Maximal: no ranged request ends where another of its resource starts.
        let ranged = requests.compactMap { request in request.byteRange.map { (request.url, $0) } }
        for (url, range) in ranged {
            #expect(!ranged.contains { $0.0 == url && $0.1.offset == range.end })
        }
        // In plan order, by each request's first part.
        let firsts = requests.compactMap { $0.label.parts.min() }
        #expect(firsts == firsts.sorted())
    }
}
