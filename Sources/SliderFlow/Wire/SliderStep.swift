/// One step of a slider session: the values the slider offers and where the session is.
public struct SliderStep: Sendable, Hashable, Codable {
    /// The session this step belongs to.
    public var sessionID: Int
    /// The step number the server reports, counting from 1.
    public var stepCount: Int
    /// The slider's values, exactly as the server sent them (duplicates and float noise kept).
    public var ticks: [Double]

    /// Creates a step.
    public init(sessionID: Int, stepCount: Int, ticks: [Double]) {
        self.sessionID = sessionID
        self.stepCount = stepCount
        self.ticks = ticks
    }
}

/// What the server answered to a start or a choice.
public enum SliderReply: Sendable, Hashable {
    /// The next step: show its ticks.
    case step(SliderStep)
    /// The session is complete.
    case complete(sessionID: Int)

    /// The session the reply belongs to.
    public var sessionID: Int {
        switch self {
        case .step(let step): step.sessionID
        case .complete(let sessionID): sessionID
        }
    }
}
