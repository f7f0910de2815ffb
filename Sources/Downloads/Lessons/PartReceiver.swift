import Foundation

/// Where a part's bytes go as they arrive, when they are handed on rather than kept (a lesson's
/// segment remuxed as it streams).
///
/// A transfer calls it one call at a time, in the order of the bytes, and awaits each call
/// before the next: a receiver may make the transfer wait (back-pressure) by not returning yet.
protocol PartReceiver: Sendable {
    /// Takes the next bytes of the part.
    func receive(_ bytes: Data) async
    /// Starts the part over: a retried transfer sends it again from its first byte.
    func restart() async
}
