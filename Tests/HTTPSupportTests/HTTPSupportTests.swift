import Foundation
import HTTPSupport
import TestSupport
import Testing

@Suite("RetryPolicy")
struct RetryPolicyTests {
    @Test(
        "delays grow exponentially up to the cap",
        arguments: [
            (1, Duration.milliseconds(500)), (2, .seconds(1)), (3, .seconds(2)), (6, .seconds(10)), (60, .seconds(10)),
        ]
    )
    func exponential(retry: Int, expected: Duration) {
        let policy = RetryPolicy(initialDelay: .milliseconds(500), multiplier: 2, maximumDelay: .seconds(10), jitter: 0)
        #expect(policy.delay(beforeRetry: retry, unit: 0.7) == expected)
    }

    @Test("jitter takes away up to its share of the delay")
    func jitter() {
        let policy = RetryPolicy(initialDelay: .seconds(1), jitter: 0.25)
        #expect(policy.delay(beforeRetry: 1, unit: 0) == .seconds(1))
        #expect(policy.delay(beforeRetry: 1, unit: 1) == .milliseconds(750))
        #expect(policy.delay(beforeRetry: 1, unit: .nan) == .seconds(1))
    }

    @Test("nonsense settings are clamped to something that works")
    func clamping() {
        let policy = RetryPolicy(maximumAttempts: -3, multiplier: .nan, jitter: 7)
        #expect(policy.maximumAttempts == 1)
        #expect(policy.multiplier == 1)
        #expect(policy.jitter == 1)
        #expect(RetryPolicy.none.maximumAttempts == 1)
    }
}

@Suite("withDeadline")
struct DeadlineTests {
    @Test("returns the value when the operation is faster than the deadline")
    func fastEnough() async throws {
        let clock = ManualClock()
        let value = try await withDeadline(.seconds(5), on: clock) { 42 }
        #expect(value == 42)
    }

    @Test("times out on the injected clock, cancelling the operation")
    func timesOut() async {
        let clock = ManualClock()
        let operation = Task {
            try await withDeadline(.seconds(5), on: clock) {
                try await clock.sleep(for: .seconds(60))
                return 1
            }
        }
        await clock.waitForSleepers(count: 2)
        clock.advance(by: .seconds(5))
        await #expect(throws: DeadlineError.timedOut(after: .seconds(5))) { try await operation.value }
        #expect(clock.sleeperCount == 0)
    }

    @Test("passes the operation's own error through")
    func operationError() async {
        await #expect(throws: URLError(.badURL)) {
            try await withDeadline(.seconds(5), on: ManualClock()) { () async throws -> Int in throw URLError(.badURL) }
        }
    }

    @Test("a cancelled caller gets CancellationError, not a timeout")
    func callerCancelled() async {
        let clock = ManualClock()
        let operation = Task {
            try await withDeadline(.seconds(5), on: clock) {
                try await clock.sleep(for: .seconds(60))
                return 1
            }
        }
        await clock.waitForSleepers(count: 2)
        operation.cancel()
        await #expect(throws: CancellationError.self) { try await operation.value }
    }
}

@Suite("bodyPreview")
struct BodyPreviewTests {
    @Test(
        "shows the first bytes readably",
        arguments: [
            (Data("short".utf8), 80, "short"),
            (Data("abcdef".utf8), 3, "abc…"),
            (Data("a\nb\tc\r".utf8), 80, "a\\nb\\tc\\r"),
            (Data([0x61, 0x00, 0xFF, 0x62]), 80, "a\\u{0}\u{FFFD}b"),
            (Data(), 80, ""),
        ]
    )
    func preview(body: Data, limit: Int, expected: String) {
        #expect(bodyPreview(body, limit: limit) == expected)
    }
}
