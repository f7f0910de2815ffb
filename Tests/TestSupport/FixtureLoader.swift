public import Foundation

/// Loads a test target's fixture files from its resource bundle.
///
/// A test target declares `resources: [.copy("Fixtures")]` and creates a loader with
/// `FixtureLoader(bundle: .module)`; paths are then relative to that `Fixtures` folder, so
/// `loader.data("hls/master.m3u8")` reads `Tests/<Module>Tests/Fixtures/hls/master.m3u8`.
public struct FixtureLoader: Sendable {
    /// Why a fixture could not be loaded.
    public enum LoadError: Error, Equatable, Sendable, CustomStringConvertible {
        /// No file exists at the path inside the fixtures folder.
        case missing(path: String, folder: String)
        /// The file is not valid UTF-8 text.
        case notUTF8(path: String)

        /// A sentence naming the fixture and where it was looked for.
        public var description: String {
            switch self {
            case .missing(let path, let folder): "No fixture '\(path)' in \(folder)"
            case .notUTF8(let path): "The fixture '\(path)' is not UTF-8 text"
            }
        }
    }

    /// The folder that fixture paths are relative to.
    public let folder: URL

    /// Creates a loader for the `subdirectory` folder of `bundle`'s resources.
    public init(bundle: Bundle, subdirectory: String = "Fixtures") {
        let root = bundle.resourceURL ?? bundle.bundleURL
        folder = root.appendingPathComponent(subdirectory, isDirectory: true)
    }

    /// Creates a loader for fixtures in `folder`.
    public init(folder: URL) {
        self.folder = folder
    }

    /// The location of the fixture at `path`.
    ///
    /// - Throws: ``LoadError/missing(path:folder:)`` when there is no such file.
    public func url(_ path: String) throws -> URL {
        let url = folder.appendingPathComponent(path)
        guard FileManager.default.fileExists(atPath: url.path) else {
            throw LoadError.missing(path: path, folder: folder.path)
        }
        return url
    }

    /// The bytes of the fixture at `path`.
    public func data(_ path: String) throws -> Data {
        try Data(contentsOf: url(path))
    }

    /// The UTF-8 text of the fixture at `path`.
    public func string(_ path: String) throws -> String {
        guard let text = String(data: try data(path), encoding: .utf8) else {
            throw LoadError.notUTF8(path: path)
        }
        return text
    }

    /// The fixture at `path` decoded from JSON.
    public func decode<Value: Decodable>(
        _ type: Value.Type, from path: String, using decoder: JSONDecoder = JSONDecoder()
    ) throws -> Value {
        try decoder.decode(type, from: data(path))
    }

    /// The paths of the files directly inside the fixture folder `subfolder`, sorted.
    public func files(in subfolder: String) throws -> [String] {
        let names = try FileManager.default.contentsOfDirectory(atPath: url(subfolder).path)
        return names.sorted().map { subfolder.isEmpty ? $0 : "\(subfolder)/\($0)" }
    }
}
