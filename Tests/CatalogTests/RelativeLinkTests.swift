import Catalog
import Foundation
import TestSupport
import Testing

/// The videos API's links are URL references: relative ones resolve against the document's URL
/// (RFC 3986 §5.2), so a lesson's media URL is always absolute and downloadable.
@Suite("Relative links in a videos list (RFC 3986 §5.2)")
struct RelativeLinkTests {
    static let document = URL(literal: "https://school.example/api/v2/videos.json")

    @Test(
        "RFC 3986 §5.2: a video_link resolves against the document's URL",
        arguments: [
            ("videos/1.m3u8", "https://school.example/api/v2/videos/1.m3u8"),
            ("/media/1.mp4", "https://school.example/media/1.mp4"),
            ("../media/1.mp4", "https://school.example/api/media/1.mp4"),
            ("./1.mp4", "https://school.example/api/v2/1.mp4"),
            ("//cdn.example/1.mp4", "https://cdn.example/1.mp4"),
            ("https://cdn.example/1.mp4", "https://cdn.example/1.mp4"),
            ("1.mp4?token=a%20b", "https://school.example/api/v2/1.mp4?token=a%20b"),
        ])
    func videoLink(link: String, expected: String) throws {
        let body = #"{"videos":[{"id":1,"name":"Light","video_link":"\#(link)"}]}"#
        let lessons = try VideosAPI.lessons(from: Data(body.utf8), relativeTo: Self.document).lessons
        #expect(lessons.first?.mediaURL?.absoluteString == expected)
    }

    @Test(
        "a thumbnail path resolves too; a bare name stays a name the app resolves",
        arguments: [
            ("thumbs/1.jpg", "https://school.example/api/v2/thumbs/1.jpg"),
            ("/img/1.jpg", "https://school.example/img/1.jpg"),
            ("sunset", "sunset"),
            ("https://cdn.example/1.jpg", "https://cdn.example/1.jpg"),
        ])
    func thumbnail(thumbnail: String, expected: String) throws {
        let body = #"{"videos":[{"id":1,"name":"Light","thumbnail":"\#(thumbnail)"}]}"#
        let lessons = try VideosAPI.lessons(from: Data(body.utf8), relativeTo: Self.document).lessons
        #expect(lessons.first?.thumbnail == expected)
    }

    @Test("the repository's videos resource resolves against the URL it fetched")
    func resource() throws {
        let body = #"{"videos":[{"id":1,"name":"Light","video_link":"videos/1.m3u8"}]}"#
        let lessons = try CatalogResource<[Lesson]>.videos(at: Self.document).decode(Data(body.utf8))
        #expect(lessons.first?.mediaURL == URL(literal: "https://school.example/api/v2/videos/1.m3u8"))
    }

    @Test(
        "without a document URL, a relative link stays relative, and another scheme is kept for the download to refuse")
    func withoutBase() throws {
        let body =
            #"{"videos":[{"id":1,"name":"A","video_link":"videos/1.m3u8"},"#
            + #"{"id":2,"name":"B","video_link":"file:///etc/passwd"}]}"#
        let lessons = try VideosAPI.lessons(from: Data(body.utf8)).lessons
        #expect(lessons.map { $0.mediaURL?.absoluteString } == ["videos/1.m3u8", "file:///etc/passwd"])
        #expect(lessons[0].mediaURL?.scheme == nil)
    }
}
