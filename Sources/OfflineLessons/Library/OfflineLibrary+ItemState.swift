public import Downloads
import Foundation

/// The form a state takes in the library's state file.
extension OfflineLibrary.ItemState: Codable {
    private enum CodingKeys: String, CodingKey {
        case notDownloaded, downloading, downloaded, failed, cancelled, paused
    }

    private enum FieldKeys: String, CodingKey {
        case fraction, fileName, byteCount
    }

    /// Reads a state as the library saves it: `{"downloaded": {"fileName": …, "byteCount": …}}`,
    /// `{"failed": {"category": …, "message": …}}`, `{"paused": {}}`…
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        guard container.allKeys.count == 1, let key = container.allKeys.first else {
            throw DecodingError.dataCorrupted(
                .init(codingPath: decoder.codingPath, debugDescription: "a state has exactly one case"))
        }
        switch key {
        case .notDownloaded: self = .notDownloaded
        case .cancelled: self = .cancelled
        case .paused: self = .paused
        case .failed: self = .failed(try container.decode(DownloadFailure.self, forKey: .failed))
        case .downloading:
            let fields = try container.nestedContainer(keyedBy: FieldKeys.self, forKey: key)
            self = .downloading(fraction: try fields.decode(Double.self, forKey: .fraction))
        case .downloaded:
            let fields = try container.nestedContainer(keyedBy: FieldKeys.self, forKey: key)
            self = .downloaded(
                fileName: try fields.decode(String.self, forKey: .fileName),
                byteCount: try fields.decode(UInt64.self, forKey: .byteCount))
        }
    }

    /// Writes the state in the form ``init(from:)`` reads.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        switch self {
        case .notDownloaded: _ = container.nestedContainer(keyedBy: FieldKeys.self, forKey: .notDownloaded)
        case .cancelled: _ = container.nestedContainer(keyedBy: FieldKeys.self, forKey: .cancelled)
        case .paused: _ = container.nestedContainer(keyedBy: FieldKeys.self, forKey: .paused)
        case .failed(let failure): try container.encode(failure, forKey: .failed)
        case .downloading(let fraction):
            var fields = container.nestedContainer(keyedBy: FieldKeys.self, forKey: .downloading)
            try fields.encode(fraction, forKey: .fraction)
        case .downloaded(let fileName, let byteCount):
            var fields = container.nestedContainer(keyedBy: FieldKeys.self, forKey: .downloaded)
            try fields.encode(fileName, forKey: .fileName)
            try fields.encode(byteCount, forKey: .byteCount)
        }
    }
}

extension DownloadFailure {
    /// The failure of an ``OfflineLibrary`` that could not record a change: a state file that
    /// could not be written is ``DownloadError/Category/storageFull`` or
    /// ``DownloadError/Category/notWritable`` by its `errno`; anything else
    /// ``DownloadError/Category/other``.
    public init(_ error: OfflineLibrary.LibraryError) {
        let category: DownloadError.Category
        switch error.kind {
        case .saveFailed(_, let code?), .readFailed(_, let code?): category = DownloadError.category(of: code)
        case .saveFailed, .readFailed, .corruptedStateFile, .newerVersion: category = .other
        }
        self.init(category: category, message: error.description)
    }
}
