/// What a failing HTTP status (RFC 9110 §15) tells a learner's screen, shared by the modules'
/// error categories so that they classify statuses alike.
package enum FailingStatus: Sendable, Hashable {
    /// The resource is not there (404 Not Found, 410 Gone).
    case notFound
    /// Access is refused (401, 403, 407 Proxy Authentication Required, 451 Unavailable For
    /// Legal Reasons).
    case accessDenied
    /// Any other failing status: the server's side.
    case server

    /// The meaning of `status`.
    package init(_ status: Int) {
        switch status {
        case 404, 410: self = .notFound
        case 401, 403, 407, 451: self = .accessDenied
        default: self = .server
        }
    }
}
