import Downloads
import Foundation
import HTTPSupport
import Player
import TestSupport
import Testing

@MainActor
@Suite("Circle player with the real fetcher")
struct CirclePlayerFetchTests {
    @Test("the circle fills from the download's real progress and then plays the file")
    func realProgress() async throws {
        let clock = ManualClock()
        let transport = InMemoryHTTPTransport(clock: clock)
        let base = URL(literal: "https://media.example/arkiva/")
        let fixtures = FixtureLoader(bundle: .module)
        for name in ["hls_index.m3u8", "hls_a256K_v4.m3u8"] {
            transport.stub(
                base.appendingPathComponent(name),
                reply: .response(status: 200, body: try fixtures.data("hls/arkiva/\(name)")))
        }
        transport.stub(
            base.appendingPathComponent("hls_a192K_v4.m3u8"),
            reply: .response(status: 200, body: try fixtures.data("hls/arkiva/hls_a192K_v4.m3u8")))
        transport.stub(
            base.appendingPathComponent("hls_a256K.ts"),
            reply: .resource(
                Data(
                    syntheticTransportStream(
                        rangeLengths: byteRangeLengths(
                            ofPlaylist: String(
                                decoding: try fixtures.data("hls/arkiva/hls_a256K_v4.m3u8"), as: UTF8.self)),
                        seed: [UInt8](try fixtures.data("audio-aac.ts"))
                    ).bytes),
                latency: .milliseconds(100)))
        let downloader = MediaDownloader(engine: DownloadEngine(clock: clock, transport: transport))
        let destination = temporaryFolder().appendingPathComponent("circle.m4a")
        let fetcher = RecordingFetcher(
            HLSAudioFetcher(
                masterURL: base.appendingPathComponent("hls_index.m3u8"), destination: destination,
                downloader: downloader))
        let output = FakeAudioOutput()
        let model = CirclePlayerModel(fetcher: fetcher, output: output, cache: FakeAudioCache())
        model.tap()
        // Time passes as fast as the download sleeps, until the fetch has ended.
        let time = Task { await clock.advanceWhileSleeping() }
        await model.waitUntilSettled()
        time.cancel()
        // Every fraction the download reported, in order: what the circle was given to show
        // (a screen samples them; which ones it drew depends on when it looked).
        let fills = fetcher.fractions
        #expect(model.state == .playing(file: destination))
        #expect(output.calls == ["play circle.m4a"])
        // What the audio output is given is an MPEG-4 audio file, not MPEG-TS.
        let head = try Data(contentsOf: destination).prefix(8)
        #expect(head.suffix(4) == Data("ftyp".utf8))
        #expect(Set(fills).count > 5)
        #expect(zip(fills, fills.dropFirst()).allSatisfy { $0 <= $1 })
    }
}

/// Forwards a fetcher's updates, keeping every fraction it reported.
private final class RecordingFetcher: AudioFetcher {
    let base: any AudioFetcher
    private let reported = LockedState<[Double]>([])

    init(_ base: any AudioFetcher) { self.base = base }

    var fractions: [Double] { reported.withLock { $0 } }

    func fetch() -> AsyncThrowingStream<FetchUpdate, any Error> {
        let upstream = base.fetch()
        let reported = reported
        let iterator = LockedState(upstream.makeAsyncIterator())
        return AsyncThrowingStream(unfolding: {
            var next = iterator.withLock { $0 }
            let update = try await next.next()
            iterator.withLock { $0 = next }
            if case .progress(let fraction)? = update { reported.withLock { $0.append(fraction) } }
            return update
        })
    }
}
