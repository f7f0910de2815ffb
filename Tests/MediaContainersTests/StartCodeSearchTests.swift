import MediaContainers
import TestSupport
import Testing

/// The remuxer's start-code search (H.264 Annex B §B.2 and H.265 Annex B: a NAL unit follows each
/// `00 00 01`), against a plain reading of the definition, on seeded byte strings dense in the
/// bytes a start code is made of.
@Suite("The start-code search")
struct StartCodeSearchTests {
    /// Start codes by the definition: every `00 00 01`, a search going on past each one found,
    /// so that `00 00 01` codes never overlap.
    static func reference(_ bytes: [UInt8]) -> Int {
        var found = 0
        var index = 0
        while index + 2 < bytes.count {
            if bytes[index] == 0, bytes[index + 1] == 0, bytes[index + 2] == 1 {
                found += 1
                index += 3
            } else {
                index += 1
            }
        }
        return found
    }

    @Test(
        "Annex B §B.2: the search finds every 00 00 01 a byte-by-byte reading finds (seeded)",
        arguments: [1, 2, 3, 42, 2026] as [UInt64])
    func findsWhatTheDefinitionFinds(seed: UInt64) {
        var random = SplitMix64(seed: seed)
        for _ in 0..<200 {
            let length = Int.random(in: 0..<600, using: &random)
            // Mostly zeros and ones, so that start codes, near misses (00 01, 00 00 02) and
            // runs of zeros (00 00 00 01) are common; some other bytes between them.
            let bytes = (0..<length).map { _ -> UInt8 in
                switch Int.random(in: 0..<10, using: &random) {
                case 0..<5: 0
                case 5..<8: 1
                default: UInt8.random(in: 2...255, using: &random)
                }
            }
            let found = bytes.withUnsafeBytes { StartCodeSearch.count(in: $0) }
            #expect(found == Self.reference(bytes), "seed \(seed), bytes \(bytes)")
        }
    }

    @Test("Annex B §B.2: a start code at either end of the bytes, and none in fewer than three bytes")
    func edges() {
        let cases: [([UInt8], Int)] = [
            ([], 0), ([0], 0), ([0, 0], 0), ([0, 0, 1], 1), ([0, 0, 0, 1], 1), ([7, 0, 0, 1], 1),
            ([0, 0, 1, 0, 0, 1], 2), ([0, 0, 1, 0, 1], 1), ([0, 1, 0, 0, 2], 0),
        ]
        for (bytes, expected) in cases {
            #expect(bytes.withUnsafeBytes { StartCodeSearch.count(in: $0) } == expected, "\(bytes)")
        }
    }
}
