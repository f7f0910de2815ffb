/// The app's wake-ups for a background session's events and the completion handlers the system
/// gives for them, as one value.
///
/// Apple's *Downloading files in the background*: the system launches or wakes the app, passes a
/// completion handler to `application(_:handleEventsForBackgroundURLSession:completionHandler:)`,
/// delivers the session's events to its delegate, then calls
/// `urlSessionDidFinishEvents(forBackgroundURLSession:)`, after which the app calls the handler.
/// The handler and the end of the events come in either order: a handler given after the end
/// is answered at once; one given before waits for it. Each handler is answered exactly once.
struct BackgroundWakeUp<Handler: Sendable>: Sendable {
    /// The handlers given and not answered yet (a wake-up may bring more than one).
    private(set) var waiting: [Handler] = []
    /// Whether the events ended with no handler to answer: the next one given is answered at once.
    private(set) var isAnswerDue = false

    /// The system gave `handler`: returns the handlers to call now (it, if the events ended
    /// already).
    ///
    /// - Complexity: O(1).
    mutating func handlerGiven(_ handler: Handler) -> [Handler] {
        guard isAnswerDue else {
            waiting.append(handler)
            return []
        }
        isAnswerDue = false
        return [handler]
    }

    /// The session's events ended (`urlSessionDidFinishEvents`): returns the handlers to call now.
    ///
    /// - Complexity: O(*n*) for the *n* handlers waiting.
    mutating func eventsEnded() -> [Handler] {
        guard !waiting.isEmpty else {
            isAnswerDue = true
            return []
        }
        defer { waiting = [] }
        return waiting
    }

    /// Another event of the session came: a wake-up goes on, and a handler given from now on
    /// waits for its end.
    ///
    /// - Complexity: O(1).
    mutating func eventReceived() {
        isAnswerDue = false
    }
}

extension BackgroundWakeUp: Equatable where Handler: Equatable {}
extension BackgroundWakeUp: Hashable where Handler: Hashable {}
