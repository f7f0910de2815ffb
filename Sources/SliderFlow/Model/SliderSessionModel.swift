public import Foundation
public import Observation

/// The slider session for a SwiftUI (or UIKit) screen: bind the view to it and call its actions.
///
/// The model runs a ``SliderSessionMachine`` against a ``SliderService``. Everything a screen
/// shows is derived from the machine's state, so it can never disagree with it: the ticks, the
/// selected index (settable, clamped), the value to display above the slider, the step number,
/// a busy flag, an error message, and the summary at the end.
///
/// Here `apiURL` stands for the server's base URL:
///
/// <!-- example: slider-model-view -->
/// ```swift
/// @MainActor
/// struct SliderScreen: View {
///     @State private var model = SliderSessionModel(service: HTTPSliderService(baseURL: apiURL))
///
///     var body: some View {
///         VStack {
///             Text(model.displayedValue).font(.largeTitle)
///             Slider(value: $model.sliderPosition, in: 0...model.sliderUpperBound, step: 1)
///                 .accessibilityValue(model.accessibilityValue)
///             Button("Next", action: model.submit).disabled(!model.canSubmit)
///         }
///         .task { model.start() }
///     }
/// }
/// ```
///
/// (`SliderScreenExample.swift` in the tests holds this view, type-checked wherever SwiftUI
/// exists.)
///
/// Strings are whole: nothing is truncated or sized for a particular font, so Dynamic Type
/// layouts can wrap them as they need.
@MainActor
@Observable
public final class SliderSessionModel {
    /// One row of the end-of-session summary.
    public struct SummaryRow: Sendable, Hashable, Identifiable {
        /// The step number, which also identifies the row.
        public var id: Int { stepCount }
        /// The step number (1 for the first step).
        public var stepCount: Int
        /// The chosen tick's index.
        public var index: Int
        /// The chosen tick's value as the server sent it.
        public var value: Double
        /// The value formatted for display in the model's locale.
        public var displayedValue: String
    }

    /// The machine's state; everything else derives from it.
    public var state: SliderSessionMachine.State { machine.state }
    /// The most recent event the machine rejected, for diagnostics (a late reply, a tap while busy).
    public private(set) var lastRejection: SliderSessionMachine.Rejection?

    private var machine: SliderSessionMachine
    @ObservationIgnored private let service: any SliderService
    @ObservationIgnored private let locale: Locale
    @ObservationIgnored private var requests: [SliderSessionMachine.RequestID: Task<Void, Never>] = [:]

    /// Creates a model for `service`, formatting values for `locale`.
    public init(service: any SliderService, locale: Locale = .autoupdatingCurrent) {
        self.service = service
        self.locale = locale
        machine = SliderSessionMachine()
    }

    // MARK: What the screen shows

    /// The current step's ticks; empty when no step is shown.
    public var ticks: [Double] { state.choosing?.step.ticks ?? [] }

    /// The selected tick's index; setting it clamps to the ticks (and is ignored while busy).
    public var selectedIndex: Int {
        get { state.choosing?.selectedIndex ?? 0 }
        set { send(.select(newValue)) }
    }

    /// The selected index as a `Double`, for binding a SwiftUI `Slider` (rounded when set).
    public var sliderPosition: Double {
        get { Double(selectedIndex) }
        set {
            guard newValue.isFinite else { return }
            // Clamp before converting: a far-out value must not trap in `Int.init`.
            selectedIndex = Int(Swift.min(Swift.max(newValue.rounded(), 0), sliderUpperBound))
        }
    }

    /// The slider's upper bound: the last tick's index (0 when there are no ticks).
    public var sliderUpperBound: Double { Double(max(ticks.count - 1, 0)) }

    /// The selected tick's value formatted for display: `-89.04`, not `-89.03999999999999`.
    public var displayedValue: String {
        state.choosing?.selectedValue.map(format) ?? ""
    }

    /// The server's step number while a step is shown.
    public var stepNumber: Int? { state.choosing?.step.stepCount }

    /// Whether a request is in flight: show progress and disable the controls.
    public var isBusy: Bool { state.isBusy }

    /// Whether the Next button can be used.
    public var canSubmit: Bool {
        if case .choosing = state { return true }
        return false
    }

    /// Whether the session is over and the summary is showing.
    public var isFinished: Bool {
        if case .finished = state { return true }
        return false
    }

    /// A sentence for the user when the last request failed; `nil` otherwise.
    public var errorMessage: String? {
        switch state {
        case .idle(let error?): Self.message(for: error, starting: true)
        case .choosing(let choosing): choosing.error.map { Self.message(for: $0, starting: false) }
        default: nil
        }
    }

    /// The choices of the finished session, one row per step.
    public var summaryRows: [SummaryRow] {
        let choices: [SliderSessionMachine.Choice]
        switch state {
        case .finished(_, let finished): choices = finished
        case .choosing(let choosing), .submitting(let choosing, _): choices = choosing.history
        default: choices = []
        }
        return choices.map {
            SummaryRow(stepCount: $0.stepCount, index: $0.index, value: $0.value, displayedValue: format($0.value))
        }
    }

    /// The slider's accessibility value: the displayed value and its position, such as
    /// "-89.04, 4 of 15".
    public var accessibilityValue: String {
        guard let choosing = state.choosing, let value = choosing.selectedValue else { return "" }
        return "\(format(value)), \(choosing.selectedIndex + 1) of \(choosing.step.ticks.count)"
    }

    /// The slider's accessibility label, with the step when one is shown.
    public var accessibilityLabel: String {
        stepNumber.map { "Value for step \($0)" } ?? "Value"
    }

    // MARK: Actions

    /// Starts a session (or a new one after the summary).
    public func start() { send(.start) }

    /// Submits the selected tick.
    public func submit() { send(.submit) }

    /// Cancels the request in flight; a submission keeps the selection.
    public func cancel() { send(.cancel) }

    /// Abandons the session and returns to the start screen.
    public func startOver() { send(.startOver) }

    /// Waits until no request is in flight and the state shows its outcome: for tests and
    /// previews, which then check the state without polling or sleeping.
    public func waitUntilSettled() async {
        while let task = requests.values.first {
            await task.value
        }
    }

    // MARK: Running the machine

    private func send(_ event: SliderSessionMachine.Event) {
        switch machine.handle(event) {
        case .accepted(let effects):
            lastRejection = nil
            for effect in effects { perform(effect) }
        case .rejected(let rejection):
            lastRejection = rejection
        }
    }

    private func perform(_ effect: SliderSessionMachine.Effect) {
        switch effect {
        case .startSession(let request):
            let service = service
            requests[request] = Task {
                let event: SliderSessionMachine.Event
                do throws(SliderServiceError) {
                    event = .startSucceeded(try await service.start(), request)
                } catch {
                    event = .startFailed(error, request)
                }
                self.finish(request, with: event)
            }
        case .submitChoice(let sessionID, let choice, let request):
            let service = service
            requests[request] = Task {
                let event: SliderSessionMachine.Event
                do throws(SliderServiceError) {
                    event = .submitSucceeded(try await service.next(sessionID: sessionID, choice: choice), request)
                } catch {
                    event = .submitFailed(error, request)
                }
                self.finish(request, with: event)
            }
        case .cancelRequest(let request):
            requests.removeValue(forKey: request)?.cancel()
        }
    }

    private func finish(_ request: SliderSessionMachine.RequestID, with event: SliderSessionMachine.Event) {
        requests.removeValue(forKey: request)
        send(event)
    }

    private func format(_ value: Double) -> String {
        value.formatted(.number.precision(.fractionLength(0...2)).locale(locale))
    }

    /// A sentence a learner can act on, for each failure.
    static func message(for error: SliderServiceError, starting: Bool) -> String {
        switch error.kind {
        case .requestRejected(let status, _) where starting && (status == 404 || status == 410):
            "The server could not start a session (\(status)). Please try again later."
        case .timedOut: "The server took too long to answer. Please try again."
        case .transport: "The connection failed. Check that you are online, then try again."
        case .httpStatus(let status, _) where status >= 500:
            "The server is having trouble (\(status)). Please try again."
        case .httpStatus(let status, _): "The server refused the request (\(status))."
        case .requestRejected(let status, _) where status == 404 || status == 410:
            "This session is no longer on the server. Start over to begin a new one."
        case .requestRejected(let status, _) where status == 401 || status == 403:
            "The server refused access (\(status)). Sign in again, then start over."
        case .requestRejected(let status, _):
            "The server could not accept this answer (\(status)). Please update the app or start over."
        case .invalidChoice: "Choose a value on the slider first."
        case .server(let message): "The server reported a problem: \(message)"
        case .decoding: "The server sent an answer this app cannot read."
        case .cancelled: "The request was cancelled."
        }
    }
}
