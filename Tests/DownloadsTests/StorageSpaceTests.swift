import Downloads
import Foundation
import Testing

/// The free-space figure a download checks before its first byte. On Apple platforms it comes
/// from `volumeAvailableCapacityForImportantUsage`; the choice between that and the file
/// system's figure runs here through the same function.
@Suite("Free space before a download")
struct StorageSpaceTests {
    @Test(
        "the capacity for important usage wins where the system reports it; negative is none free",
        arguments: [
            (Int64(5_000_000), UInt64(5_000_000)),
            (Int64(0), UInt64(0)),
            (Int64(-4_096), UInt64(0)),
            (Int64.max, UInt64(Int64.max)),
        ])
    func importantUsage(reported: Int64, expected: UInt64) {
        var askedFileSystem = false
        let figure = StorageSpace.figure(importantUsage: reported) {
            askedFileSystem = true
            return 1
        }
        #expect(figure == expected)
        #expect(!askedFileSystem)
    }

    @Test("without the capacity for important usage (Linux, or a volume that does not say), the file system's figure")
    func fileSystem() {
        let reported = StorageSpace.figure(importantUsage: nil) { 123_456 }
        let unknown = StorageSpace.figure(importantUsage: nil) { nil }
        #expect(reported == 123_456)
        #expect(unknown == nil)
    }
}
