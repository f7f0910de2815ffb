import Foundation
import HTTPSupport
import SliderFlow
import TestSupport
import Testing

/// Typed throws must not make ordinary Swift awkward: each public async API of the module in
/// the shapes apps write (`async let`, `try await` where errors are untyped, a typed `catch`,
/// `try?`, a `Task`). That these compile is half the evidence; the other half is the values.
@Suite("SliderFlow call shapes")
struct SliderCallShapeTests {
    func service() -> HTTPSliderService<ContinuousClock> {
        HTTPSliderService(
            baseURL: URL(literal: "https://slider.example/api"), timeout: loopbackDeadline,
            startRetry: RetryPolicy(jitter: 0),
            clock: ContinuousClock(), randomUnit: { 0.5 }, transport: SliderReferenceServer(stepsPerSession: 2))
    }

    /// An untyped context: the typed error converts to `any Error` with no ceremony.
    func untypedStart(_ service: HTTPSliderService<ContinuousClock>) async throws -> SliderReply {
        try await service.start()
    }

    @Test("start(), next(sessionID:choice:) and next(after:choice:): async let, untyped try, typed catch, try?, Task")
    func shapes() async throws {
        let service = service()
        async let first = service.start()
        guard case .step(let step) = try await first else {
            Issue.record("no step")
            return
        }
        #expect(try await untypedStart(service).sessionID != step.sessionID)
        async let second = service.next(after: step, choice: 0)
        #expect(try await second.sessionID == step.sessionID)
        do {
            _ = try await service.next(after: step, choice: -1)
        } catch {
            // `error` is a SliderServiceError here: no cast.
            #expect(error.kind == .invalidChoice(-1, tickCount: step.ticks.count))
        }
        #expect((try? await service.next(sessionID: step.sessionID, choice: 99)) == nil)
        let task = Task { try await service.start() }
        #expect(try await task.value.sessionID > 0)
    }
}
