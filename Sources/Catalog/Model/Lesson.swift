public import Foundation

/// A lesson or video of a catalog, whatever source it came from.
public struct Lesson: Hashable, Sendable, Codable, Identifiable {
    /// A stable identifier: the source's own id, or one derived from the content (see
    /// ``ClassSpreadsheet``) so that progress and downloads keyed by it survive a re-import.
    public var id: String
    /// The title.
    public var title: String
    /// The instructor or author.
    public var instructor: String?
    /// The level (`beginner`, `intermediate`, `advanced`), if the source has one.
    public var level: String?
    /// A description.
    public var summary: String?
    /// The video or audio.
    public var mediaURL: URL?
    /// The thumbnail image: a URL, or a name the app resolves.
    public var thumbnail: String?
    /// Every other field of the source, kept by name.
    public var extra: [String: String]

    /// Creates a lesson.
    public init(
        id: String, title: String, instructor: String? = nil, level: String? = nil, summary: String? = nil,
        mediaURL: URL? = nil, thumbnail: String? = nil, extra: [String: String] = [:]
    ) {
        self.id = id
        self.title = title
        self.instructor = instructor
        self.level = level
        self.summary = summary
        self.mediaURL = mediaURL
        self.thumbnail = thumbnail
        self.extra = extra
    }

    /// The thumbnail as a URL, when it is an absolute `http` or `https` one (what
    /// ``ThumbnailCache/data(for:)`` fetches); `nil` for a name the app resolves itself.
    public var thumbnailURL: URL? {
        guard let thumbnail, let url = URL(string: thumbnail), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", url.host?.isEmpty == false
        else { return nil }
        return url
    }
}
