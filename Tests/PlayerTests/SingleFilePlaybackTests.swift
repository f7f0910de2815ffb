import Foundation
import Player
import Testing

/// A file player that records what it was asked and starts unless told to refuse, standing in
/// for `AVAudioPlayer` as `SimulatedAVPlayer` stands in for `AVPlayer`.
@MainActor
final class SimulatedFilePlayer: AudioFilePlayer {
    var calls: [String] = []
    let refusesToStart: Bool

    init(refusesToStart: Bool = false) {
        self.refusesToStart = refusesToStart
    }

    func play() -> Bool {
        calls.append("play")
        return !refusesToStart
    }

    func pause() { calls.append("pause") }
    func stop() { calls.append("stop") }
}

/// The rules `AudioPlayerOutput` applies to `AVAudioPlayer` on Apple platforms, run here through
/// the same type over a simulated player.
@Suite("Single-file playback (AudioPlayerOutput's rules)")
@MainActor
struct SingleFilePlaybackTests {
    @Test("a file that plays to its end reports it once; a second end of the same player is ignored")
    func endOnce() {
        let playback = SingleFilePlayback<SimulatedFilePlayer>()
        let player = SimulatedFilePlayer()
        var ends = 0
        let token = playback.nextToken
        let started1 = playback.start(player, onEnd: { ends += 1 })
        #expect(started1)
        #expect(playback.isActive)
        playback.playerEnded(token)
        playback.playerEnded(token)
        #expect(ends == 1)
        #expect(!playback.isActive)
    }

    @Test("starting another file stops the first, and the first's late end is never reported")
    func replacedPlayerIsSilent() {
        let playback = SingleFilePlayback<SimulatedFilePlayer>()
        let first = SimulatedFilePlayer()
        let second = SimulatedFilePlayer()
        var ended: [String] = []
        let firstToken = playback.nextToken
        let started2 = playback.start(first, onEnd: { ended.append("first") })
        #expect(started2)
        let secondToken = playback.nextToken
        let started3 = playback.start(second, onEnd: { ended.append("second") })
        #expect(started3)
        #expect(first.calls == ["play", "stop"])
        playback.playerEnded(firstToken)  // the delegate call was already on its way
        #expect(ended.isEmpty)
        playback.playerEnded(secondToken)
        #expect(ended == ["second"])
    }

    @Test("a stopped player never reports its end, and stopping an idle output does nothing")
    func stopped() {
        let playback = SingleFilePlayback<SimulatedFilePlayer>()
        playback.stop()
        let player = SimulatedFilePlayer()
        var ends = 0
        let token = playback.nextToken
        let started4 = playback.start(player, onEnd: { ends += 1 })
        #expect(started4)
        playback.stop()
        playback.playerEnded(token)
        #expect(ends == 0)
        #expect(player.calls == ["play", "stop"])
        #expect(!playback.isActive)
    }

    @Test("a player freed and replaced by one at the same address is told apart: the old end is ignored")
    func tokensNotAddresses() {
        let playback = SingleFilePlayback<SimulatedFilePlayer>()
        var ended: [Int] = []
        let firstToken = playback.nextToken
        let startedFirst = playback.start(SimulatedFilePlayer(), onEnd: { ended.append(1) })  // freed when replaced
        let startedSecond = playback.start(SimulatedFilePlayer(), onEnd: { ended.append(2) })
        #expect(startedFirst && startedSecond)
        playback.playerEnded(firstToken)
        #expect(ended.isEmpty)
        #expect(playback.isActive)
    }

    @Test("pause and resume reach the current player only")
    func pauseAndResume() {
        let playback = SingleFilePlayback<SimulatedFilePlayer>()
        playback.pause()  // nothing playing: nothing to do
        let player = SimulatedFilePlayer()
        let started5 = playback.start(player, onEnd: {})
        #expect(started5)
        playback.pause()
        playback.resume()
        #expect(player.calls == ["play", "pause", "play"])
    }

    @Test("a player that refuses to start is not kept, and its end is never reported")
    func refused() {
        let playback = SingleFilePlayback<SimulatedFilePlayer>()
        let playing = SimulatedFilePlayer()
        let started6 = playback.start(playing, onEnd: {})
        #expect(started6)
        let refusing = SimulatedFilePlayer(refusesToStart: true)
        var ends = 0
        let token = playback.nextToken
        let started7 = playback.start(refusing, onEnd: { ends += 1 })
        #expect(!started7)
        #expect(playing.calls == ["play", "stop"])  // the file before was stopped first
        #expect(!playback.isActive)
        playback.playerEnded(token)
        #expect(ends == 0)
    }
}
