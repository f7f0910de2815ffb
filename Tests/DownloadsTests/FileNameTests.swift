import Downloads
import Foundation
import OfflineLessons
import Testing

@Suite("Offline file names")
struct FileNameTests {
    @Test(
        "FIPS 180-4's SHA-256 examples (and a multi-block message)",
        arguments: [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            (
                "abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq",
                "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"
            ),
            (String(repeating: "a", count: 1_000), "41edece42d63e8d9bf515a9ba6932e1c20cbc9f5a5d134645adb5db1b9737ea3"),
            // Padding at the block edges: 55, 56 and 64 bytes (computed with Python's hashlib).
            (String(repeating: "a", count: 55), "9f4390f8d30c2dd92ec9f095b65e2b9ae9b0a925a5258e241c9f1e910f734318"),
            (String(repeating: "a", count: 56), "b35439a4ac6f0948b6d6f9e3c6af0f5f590ce20f1bde7090ef7970686ec6738a"),
            (String(repeating: "a", count: 64), "ffe054fe7ae0cb6dc65c3af9b61d5209f439851db43d0ba5997337df154668eb"),
            ("lesson-ü", "9e1f4d00d351b0e478f125254c8755ed6b9c9134afa670c0b00660705092f532"),
        ])
    func sha256(message: String, expected: String) {
        #expect(SHA256.hexDigest(message.utf8) == expected)
    }

    @Test("file names carry 128 bits of the id's SHA-256: distinct ids, distinct files, from a fixed alphabet")
    func distinctNames() {
        let remote = URL(fileURLWithPath: "/v.mp4")
        let name = OfflineLibrary.fileName(for: "lesson-ü", remote: remote)
        #expect(name == "lesson-_-9e1f4d00d351b0e478f125254c8755ed.mp4")
        // Ids that differ only in case, or only past the readable prefix, stay apart.
        #expect(
            OfflineLibrary.fileName(for: "Salsa", remote: remote)
                != OfflineLibrary.fileName(for: "salsa", remote: remote))
        let long = String(repeating: "x", count: 40)
        #expect(
            OfflineLibrary.fileName(for: long + "1", remote: remote)
                != OfflineLibrary.fileName(for: long + "2", remote: remote))
        let names = Set((0..<10_000).map { OfflineLibrary.fileName(for: "lesson-\($0)", remote: remote) })
        #expect(names.count == 10_000)
        let alphabet = Set("abcdefghijklmnopqrstuvwxyz0123456789_.-".utf8)
        #expect(names.allSatisfy { $0.utf8.allSatisfy(alphabet.contains) })
    }
}
