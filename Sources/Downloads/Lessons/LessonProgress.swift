import Foundation
import Locking

/// The progress of a lesson download: bytes received against the expected size, which is
/// refined from the segments done when it is an estimate.
final class LessonProgress: Sendable {
    private struct State {
        var received: UInt64
        var inFlight: UInt64 = 0
        var written: UInt64
        var partsDone: Int
        var secondsDone: Double
        var floor: Double
    }

    private let plan: LessonPlan
    private let job: DownloadJob
    private let state: Locked<State>

    init(plan: LessonPlan, job: DownloadJob, received: UInt64, written: UInt64, stepsDone: Int, floor: Double) {
        self.plan = plan
        self.job = job
        let partsDone = plan.firstPart(ofStep: stepsDone)
        state = Locked(
            State(
                received: received, written: written, partsDone: partsDone,
                secondsDone: plan.parts.prefix(partsDone).reduce(0) { $0 + $1.duration }, floor: floor))
    }

    /// The fraction last shown, which a checkpoint keeps so a resume never shows less.
    var shownFraction: Double { state.withLock { $0.floor } }

    /// The source bytes of the steps done.
    var bytesOfStepsDone: UInt64 { state.withLock { $0.received } }

    /// Notes the bytes received for steps not yet remuxed, and reports.
    func arriving(_ bytes: UInt64) {
        state.withLock { $0.inFlight = bytes }
        publish()
    }

    /// Notes a step remuxed: its parts' source bytes and seconds, and the file's new length.
    func stepDone(bytes: UInt64, seconds: Double, parts: Int, written: UInt64) {
        state.withLock { state in
            state.received += bytes
            state.inFlight = state.inFlight > bytes ? state.inFlight - bytes : 0
            state.secondsDone += seconds
            state.partsDone += parts
            state.written = written
        }
        publish()
    }

    /// The expected size: exact, or the bandwidth estimate blended toward the rate of the
    /// segments done as more of the lesson is done.
    private func expected(_ state: State) -> UInt64? {
        if plan.isExact { return plan.expectedBytes }
        let partSeconds = plan.parts.reduce(0) { $0 + $1.duration }
        guard state.secondsDone > 0, partSeconds > 0 else { return plan.expectedBytes }
        let observed = Double(state.received) / state.secondsDone
        let share = min(state.secondsDone / partSeconds, 1)
        let initial = plan.expectedBytes.map { Double($0) / partSeconds } ?? observed
        let rate = share * observed + (1 - share) * initial
        return saturatingBytes(
            max(Double(state.received) + (partSeconds - state.secondsDone) * rate, Double(state.received)))
    }

    /// The expected size of the source now: exact, from the playlist's bandwidth, or from the
    /// segments done; `nil` before any of those is known.
    var estimatedBytes: UInt64? { expected(state.current) }

    /// Publishes a report; its fraction stays below 1 until ``complete(byteCount:)``.
    func publish() {
        let report = state.withLock { state in
            let expected = expected(state)
            let bytes = state.received + state.inFlight
            var fraction: Double
            if let expected, expected > 0 {
                fraction = Double(bytes) / Double(expected)
            } else {
                fraction = plan.parts.isEmpty ? 0 : Double(state.partsDone) / Double(plan.parts.count)
            }
            fraction = min(max(fraction, state.floor), 0.999)
            state.floor = fraction
            return DownloadProgress(
                bytesWritten: state.written, partsCompleted: state.partsDone, partCount: plan.parts.count,
                bytesExpected: expected, bytesReceived: bytes, isEstimate: !plan.isExact, fraction: fraction)
        }
        job.report(report)
    }

    /// Publishes the finished download.
    func complete(byteCount: UInt64) {
        let bytes = state.withLock { $0.received }
        job.report(
            DownloadProgress(
                bytesWritten: byteCount, partsCompleted: plan.parts.count, partCount: plan.parts.count,
                bytesExpected: bytes, bytesReceived: bytes, isEstimate: false, fraction: 1))
    }
}
