public import Foundation

extension URL {
    /// Creates a URL from a string literal written in a test.
    ///
    /// A malformed literal is a mistake in the test itself, not input data, so it stops the test
    /// run with the literal in the message. Library code never uses this.
    public init(literal: StaticString) {
        guard let url = URL(string: "\(literal)") else {
            fatalError("Malformed URL literal in a test: \(literal)")
        }
        self = url
    }
}
