import Downloads
import Foundation
import HLS
import HTTPSupport
import MediaContainers
import OfflineLessons
import TestSupport
import Testing

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// The categories a screen switches on, the sentences that name the place once, and the
/// failures the library keeps across launches.
@Suite("Download failures a screen can show")
struct DownloadFailureTests {
    static let url = URL(literal: "https://lessons.example/950/seg3.ts")

    @Test(
        "each error's category",
        arguments: [
            (DownloadError.Kind.httpStatus(404), DownloadError.Category.notFound), (.httpStatus(410), .notFound),
            (.httpStatus(401), .accessDenied), (.httpStatus(403), .accessDenied), (.httpStatus(503), .server),
            (.httpStatus(429), .server),
            (.transport(HTTPTransportError(.network(URLError(.notConnectedToInternet)), url: url)), .offline),
            (.transport(HTTPTransportError(.network(URLError(.networkConnectionLost)), url: url)), .offline),
            (.transport(HTTPTransportError(.network(URLError(.cannotFindHost)), url: url)), .offline),
            (.transport(HTTPTransportError(.timedOut(after: .seconds(30)), url: url)), .offline),
            (.transport(HTTPTransportError(.network(URLError(.serverCertificateUntrusted)), url: url)), .server),
            (.transport(HTTPTransportError(.network(URLError(.userAuthenticationRequired)), url: url)), .accessDenied),
            (.transport(HTTPTransportError(.cancelled, url: url)), .cancelled),
            (.insufficientStorage(needed: 10, available: 1), .storageFull),
            (.file(operation: "write", reason: "", code: ENOSPC), .storageFull),
            (.file(operation: "write", reason: "", code: EDQUOT), .storageFull),
            (.file(operation: "create", reason: "", code: EROFS), .notWritable),
            (.file(operation: "open", reason: "", code: EACCES), .notWritable),
            (.file(operation: "open", reason: "", code: EPERM), .notWritable),
            (.file(operation: "write", reason: "", code: EIO), .other),
            // The message never decides: only the code.
            (.file(operation: "write", reason: "No space left on device"), .other),
            (.file(operation: "write", reason: "Read-only file system"), .other),
            (.notMedia(contentType: "text/html", found: "an HTML page"), .notMedia),
            (.decryptionFailed(reason: "bad padding"), .notMedia), (.keyRefused(status: 403), .accessDenied),
            (.liveStream, .unsupported), (.encrypted(method: "SAMPLE-AES"), .unsupported),
            (.unsupportedCodec("dvh1"), .unsupported),
            (.container(ContainerError(.unsupportedFormat("Opus"))), .unsupported),
            (.container(ContainerError(.unsupportedCodec(StreamType(rawValue: 0x82)))), .unsupported),
            (.container(ContainerError(.lostSync(found: 0))), .notMedia),
            (.container(ContainerError(.timestampsStepBack(seconds: 2))), .server), (.cancelled, .cancelled),
            (.paused, .paused),
            (.destinationInUse, .other), (.wrongLength(expected: 10, received: 5), .server),
        ])
    func categories(kind: DownloadError.Kind, category: DownloadError.Category) {
        #expect(DownloadError(kind, url: Self.url).category == category)
    }

    @Test(
        "RFC 9110 §15 and URLError: failures that sending again cannot change are not retried",
        arguments: [
            (URLError.Code.serverCertificateUntrusted, false), (.serverCertificateHasBadDate, false),
            (.secureConnectionFailed, false), (.clientCertificateRejected, false),
            (.appTransportSecurityRequiresSecureConnection, false), (.badURL, false), (.unsupportedURL, false),
            (.httpTooManyRedirects, false), (.userAuthenticationRequired, false), (.dataNotAllowed, false),
            (.notConnectedToInternet, true), (.networkConnectionLost, true), (.timedOut, true),
            (.cannotConnectToHost, true), (.cannotFindHost, true), (.badServerResponse, true), (.cancelled, true),
        ])
    func transient(code: URLError.Code, isTransient: Bool) {
        #expect(HTTPTransportError(.network(URLError(code)), url: Self.url).isTransient == isTransient)
    }

    @Test("a failure's sentence names the part and its URL once")
    func placeOnce() {
        let error = DownloadError(
            .transport(HTTPTransportError(.network(URLError(.networkConnectionLost)), url: Self.url)), part: 1,
            url: Self.url)
        let text = error.description
        #expect(text.hasPrefix("part 1, https://lessons.example/950/seg3.ts: network failure -1005"))
        #expect(text.components(separatedBy: Self.url.absoluteString).count == 2)
    }

    @Test("a failure keeps its category and sentence across launches, and reads a state file without a category")
    func persisted() throws {
        let failure = DownloadFailure(DownloadError(.httpStatus(404), url: Self.url))
        let state = OfflineLibrary.ItemState.failed(failure)
        let data = try JSONEncoder().encode(state)
        let read = try JSONDecoder().decode(OfflineLibrary.ItemState.self, from: data)
        #expect(read == .failed(DownloadFailure(category: .notFound, message: failure.message)))
        let older = Data(#"{"failed":{"message":"HTTP 500"}}"#.utf8)
        #expect(
            try JSONDecoder().decode(OfflineLibrary.ItemState.self, from: older)
                == .failed(DownloadFailure(category: .other, message: "HTTP 500")))
        for state in [
            OfflineLibrary.ItemState.notDownloaded, .downloading(fraction: 0.25),
            .downloaded(fileName: "a.mp4", byteCount: 7), .cancelled, .paused,
        ] {
            #expect(try JSONDecoder().decode(OfflineLibrary.ItemState.self, from: JSONEncoder().encode(state)) == state)
        }
    }

    @Test("DownloadFailure's doc comment: a screen's words chosen by category")
    func words() {
        let failure = DownloadFailure(
            DownloadError(.transport(HTTPTransportError(.network(URLError(.notConnectedToInternet)), url: Self.url))))
        // example: begin download-failure
        let words =
            switch failure.category {
            case .offline: "You're offline. Retry when you're back online."
            case .storageFull: "Free up space to download this lesson."
            default: "This lesson couldn't be downloaded."
            }
        // example: end download-failure
        #expect(words.hasPrefix("You're offline"))
    }
}

/// Every category has words a screen can show and an offer, and no two share their words.
@Suite("Download failure categories in words")
struct FailureCategoryWordsTests {
    @Test(
        "each category's summary and what the screen offers",
        arguments: [
            (DownloadError.Category.offline, DownloadError.Category.Recovery.retryWhenOnline),
            (.server, .retryLater), (.other, .retryLater), (.storageFull, .freeUpSpace), (.accessDenied, .signIn),
            (.notMedia, .signIn), (.notFound, .none), (.unsupported, .none), (.notWritable, .retryLater),
            (.cancelled, .nothingToShow), (.paused, .nothingToShow),
        ])
    func words(category: DownloadError.Category, recovery: DownloadError.Category.Recovery) {
        #expect(category.recovery == recovery)
        #expect(!category.summary.isEmpty && category.summary.hasSuffix("."))
    }

    @Test("every category is in the table above, and no two summaries are the same")
    func complete() {
        #expect(DownloadError.Category.allCases.count == 11)
        #expect(Set(DownloadError.Category.allCases.map(\.summary)).count == DownloadError.Category.allCases.count)
    }
}
