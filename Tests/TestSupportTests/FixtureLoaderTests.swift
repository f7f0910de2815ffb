import Foundation
import TestSupport
import Testing

@Suite("FixtureLoader")
struct FixtureLoaderTests {
    let loader = FixtureLoader(bundle: .module)

    @Test("reads text, bytes and JSON from the bundle's Fixtures folder")
    func reads() throws {
        #expect(try loader.string("greeting.txt") == "hello, fixture\n")
        #expect(try loader.data("greeting.txt").count == 15)
        struct Info: Decodable, Equatable {
            var name: String
            var modules: Int
        }
        #expect(try loader.decode(Info.self, from: "nested/info.json") == Info(name: "MediaCore", modules: 5))
        #expect(try loader.files(in: "nested") == ["nested/binary.bin", "nested/info.json"])
    }

    @Test("a missing fixture is a typed error naming the path")
    func missing() throws {
        #expect(throws: FixtureLoader.LoadError.missing(path: "absent.txt", folder: loader.folder.path)) {
            try loader.data("absent.txt")
        }
    }

    @Test("bytes that are not UTF-8 are a typed error, not garbled text")
    func notUTF8() throws {
        #expect(throws: FixtureLoader.LoadError.notUTF8(path: "nested/binary.bin")) {
            try loader.string("nested/binary.bin")
        }
    }
}
