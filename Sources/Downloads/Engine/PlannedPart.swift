/// One part of a download's plan, with its index: what a run that stops hands on to be fetched
/// elsewhere (the background transfers of an offline library), and what that fetch brings back.
package struct PlannedPart: Hashable, Sendable {
    /// Its index in the download's plan.
    package var index: Int
    /// Where its bytes are.
    package var part: DownloadPart
    /// Its size when known before its transfer (a byte range's length is always known).
    package var expectedBytes: UInt64?

    /// A part at `index` of a plan.
    package init(index: Int, part: DownloadPart, expectedBytes: UInt64?) {
        self.index = index
        self.part = part
        self.expectedBytes = expectedBytes
    }
}
