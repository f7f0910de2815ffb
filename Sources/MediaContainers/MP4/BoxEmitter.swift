import Foundation

/// Writes boxes straight to an output at increasing offsets, in buffered pieces, patching each
/// box's size (and counts written as placeholders) when it closes, in the buffer or in the file.
struct BoxEmitter: BigEndianAppending {
    private let output: any MP4Output
    private var buffer: [UInt8] = []
    private var bufferStart: UInt64
    private var open: [UInt64] = []

    init(output: any MP4Output, start: UInt64) {
        self.output = output
        bufferStart = start
        buffer.reserveCapacity(1 << 16)
    }

    /// The absolute offset of the next byte.
    var position: UInt64 { bufferStart + UInt64(buffer.count) }

    /// Writes a box of `type` (§4.2): its header, what `body` appends (nested boxes included), then
    /// its size. A box written this way cannot be left open, and the nesting of the calls is the
    /// nesting of the boxes.
    mutating func box(_ type: String, _ body: (inout BoxEmitter) throws(ContainerError) -> Void)
        throws(ContainerError)
    {
        begin(type)
        try body(&self)
        try end()
    }

    /// Writes a full box of `type` (§4.2): a box whose header carries a version and 24 bits of
    /// flags.
    mutating func fullBox(
        _ type: String, version: UInt8 = 0, flags: UInt32 = 0,
        _ body: (inout BoxEmitter) throws(ContainerError) -> Void
    ) throws(ContainerError) {
        begin(type)
        append32(UInt32(version) << 24 | (flags & 0xFF_FFFF))
        try body(&self)
        try end()
    }

    private mutating func begin(_ type: String) {
        open.append(position)
        append32(0)
        appendType(type)
    }

    private mutating func end() throws(ContainerError) {
        guard let start = open.popLast() else { return }
        try patch32(start, UInt32(truncatingIfNeeded: position - start))
    }

    /// Reserves four bytes for a count and returns their offset.
    mutating func placeholder32() -> UInt64 {
        let at = position
        append32(0)
        return at
    }

    /// Writes `value` at the absolute offset `at`, in the buffer or, when already written, in the
    /// output.
    mutating func patch32(_ at: UInt64, _ value: UInt32) throws(ContainerError) {
        let bytes = [UInt8(value >> 24), UInt8(value >> 16 & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value & 0xFF)]
        if at >= bufferStart {
            let index = Int(at - bufferStart)
            buffer.replaceSubrange(index..<(index + 4), with: bytes)
        } else {
            let output = output
            try MP4Writer.attempt { try bytes.withUnsafeBytes { try output.write($0, at: at) } }
        }
    }

    mutating func flushIfNeeded() throws(ContainerError) {
        if buffer.count >= 1 << 20 { try flush() }
    }

    mutating func flush() throws(ContainerError) {
        guard !buffer.isEmpty else { return }
        let at = bufferStart
        let output = output
        try MP4Writer.attempt { try buffer.withUnsafeBytes { raw in try output.write(raw, at: at) } }
        bufferStart += UInt64(buffer.count)
        buffer.removeAll(keepingCapacity: true)
    }

    mutating func append8(_ value: UInt8) { buffer.append(value) }

    mutating func append(_ bytes: some Sequence<UInt8>) { buffer.append(contentsOf: bytes) }

    /// Creation and modification times: zero, in 32 or 64 bits.
    mutating func appendTimes(large: Bool) {
        appendZeros(large ? 16 : 8)
    }

}

/// A sample table of runs (`stts`, `ctts`, `stsc`, ISO/IEC 14496-12 §8.6.1.2, §8.6.1.3, §8.7.4):
/// consecutive equal values are one entry, written to the box as each run ends.
///
/// `stts` and `ctts` entries lead with the run's length; `stsc` entries lead with the number of
/// the run's first element (its first chunk), from 1.
///
/// - Complexity: O(1) per value.
struct RunLengthTable<Value: RunLengthValue> {
    /// What each entry leads with.
    enum Lead {
        /// The number of values in the run (`stts`, `ctts`).
        case length
        /// The number of the run's first value, from 1 (`stsc`).
        case firstNumber
    }

    let lead: Lead
    /// The entries written.
    private(set) var runCount: UInt32 = 0
    private var run: (first: UInt32, length: UInt32, value: Value)?
    private var nextNumber: UInt32 = 1

    init(lead: Lead) {
        self.lead = lead
    }

    /// Adds the next value, writing the run it ends, if any.
    mutating func append(_ value: Value, into box: inout BoxEmitter) {
        defer { nextNumber &+= 1 }
        if let current = run, current.value == value, current.length < UInt32.max {
            run?.length += 1
            return
        }
        finish(into: &box)
        run = (nextNumber, 1, value)
    }

    /// Writes the last run.
    mutating func finish(into box: inout BoxEmitter) {
        guard let current = run else { return }
        box.append32(lead == .length ? current.length : current.first)
        current.value.append(to: &box)
        runCount += 1
        run = nil
    }
}

/// A value a ``RunLengthTable`` holds: compared for runs, and written after the entry's lead.
protocol RunLengthValue: Equatable {
    /// Appends the value's fields.
    func append(to box: inout BoxEmitter)
}

extension UInt32: RunLengthValue {
    func append(to box: inout BoxEmitter) { box.append32(self) }
}
