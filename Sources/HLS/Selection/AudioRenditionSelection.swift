public import Foundation

/// What is known about one audio group's quality from a multivariant playlist.
public struct AudioGroupEvidence: Hashable, Sendable {
    /// The group.
    public var groupID: String
    /// How many variants play with this group.
    public var referencingVariantCount: Int
    /// The audio codecs the referencing variants declare, sorted.
    public var codecs: [String]
    /// The best codec tier among them (see ``HLSCodec/audioTier(_:)``), -1 when unknown.
    public var codecTier: Int
    /// The most channels any of the group's renditions declares.
    public var channels: Int?
    /// The bandwidth of an audio-only variant of this group (AVERAGE-BANDWIDTH, else BANDWIDTH).
    public var audioOnlyVariantBandwidth: UInt64?
    /// The renditions' own BANDWIDTH attribute (RFC 8216bis), if declared.
    public var renditionBandwidth: UInt64?
    /// The highest BANDWIDTH among the variants that play with this group.
    public var bestReferencingVariantBandwidth: UInt64?
    /// How much more BANDWIDTH the same video declares with this group than with the leanest
    /// group it is listed with; `nil` when its videos are never listed with another group.
    public var pairedBandwidthDelta: Int64?
    /// The average bit rate measured from the group's media playlist, when measured.
    public var measuredBitrate: Double?
}

/// The highest-quality audio of a multivariant playlist, and why.
public struct AudioSelection: Hashable, Sendable {
    /// What to fetch.
    public enum Choice: Hashable, Sendable {
        /// An audio rendition with its own media playlist.
        case rendition(HLSRendition)
        /// A variant whose audio is muxed with its video (no audio rendition has a URI).
        case variant(HLSVariant)
    }

    /// The criterion that separated the chosen group from the next one.
    public enum Rule: String, Hashable, Sendable {
        /// The only group with a URI.
        case onlyCandidate
        /// Bit-rate evidence that every group has: the BANDWIDTH difference of the same video.
        case pairedBandwidth
        /// Bit-rate evidence that every group has: an audio-only variant's bandwidth.
        case audioOnlyBandwidth
        /// Bit-rate evidence that every group has: the renditions' BANDWIDTH attribute.
        case renditionBandwidth
        /// Average bit rate measured from the media playlists' byte ranges.
        case measuredBitrate
        /// More channels.
        case channels
        /// A better codec.
        case codecTier
        /// The best variant playing with the group has a higher BANDWIDTH.
        case referencingVariantBandwidth
        /// Nothing told the groups apart; the first in the playlist.
        case documentOrder
        /// No audio rendition has a URI: the audio is muxed, so the highest-BANDWIDTH variant.
        case muxed
    }

    /// What to fetch.
    public var choice: Choice
    /// The chosen group (`nil` for muxed audio).
    public var groupID: String?
    /// The rule that decided.
    public var decidedBy: Rule
    /// The groups from best to worst.
    public var ranking: [String]
    /// The evidence per group, in ranking order.
    public var evidence: [AudioGroupEvidence]
    /// A sentence explaining the choice.
    public var explanation: String

    /// The chosen URI, as written in the playlist.
    public var uri: String {
        switch choice {
        case .rendition(let rendition): rendition.uri ?? ""
        case .variant(let variant): variant.uri
        }
    }
}

extension HLSMultivariantPlaylist {
    /// Chooses the highest-quality audio from what the playlist declares.
    ///
    /// Quality belongs to an audio *group* (groups are alternative encodings; the renditions of
    /// one group are alternative languages). Groups are ranked by bit-rate evidence when every
    /// group has the same kind (the BANDWIDTH difference of one video listed with different
    /// groups, else an audio-only variant's bandwidth, else the renditions' BANDWIDTH), then by
    /// channels, codec tier and the best referencing variant's BANDWIDTH. Within the group, the
    /// rendition is chosen as ``preferredRendition(among:preferredLanguages:primaryLanguage:)``
    /// does: a preferred language among those that may be chosen automatically, then DEFAULT,
    /// then AUTOSELECT. Names and file names are never used: both arkiva renditions are called
    /// "Default".
    ///
    /// - Parameters:
    ///   - preferredLanguages: Language tags in order of preference (`["fr", "en"]`), matched by
    ///     RFC 4647's lookup (`en` matches `en-US`, `es-ES` matches `es`).
    ///   - isSupported: Whether the app can use a `CODECS` entry (`"mp4a.40.2"`). A group whose
    ///     variants declare an audio codec it refuses is left out before ranking, as is a muxed
    ///     variant with any codec it refuses; a group or variant that declares no codecs stays.
    ///     Everything is supported by default.
    /// - Returns: The choice, or `nil` when the playlist has neither audio renditions nor
    ///   variants (or none with supported codecs).
    /// - Complexity: O(*v* · *r*) for *v* variants and *r* renditions.
    public func highestQualityAudio(
        preferredLanguages: [String] = [], supporting isSupported: (String) -> Bool = { _ in true }
    ) -> AudioSelection? {
        rankAudio(preferredLanguages: preferredLanguages, measured: [:], isSupported: isSupported)
    }

    /// Chooses the highest-quality audio, measuring the candidates' media playlists when the
    /// multivariant playlist gives no evidence that tells the best groups apart.
    ///
    /// - Parameters:
    ///   - playlistURL: The multivariant playlist's URL, to resolve the renditions' URIs.
    ///   - preferredLanguages: Language tags in order of preference.
    ///   - isSupported: Whether the app can use a `CODECS` entry, as in
    ///     ``highestQualityAudio(preferredLanguages:supporting:)``.
    ///   - load: Fetches a media playlist's bytes.
    /// - Throws: Whatever `load` throws, an ``HLSParseError`` or an ``HLSURIError``.
    public func highestQualityAudio(
        playlistURL: URL, preferredLanguages: [String] = [], supporting isSupported: (String) -> Bool = { _ in true },
        measuringWith load: (URL) async throws -> Data
    ) async throws -> AudioSelection? {
        guard let selection = rankAudio(preferredLanguages: preferredLanguages, measured: [:], isSupported: isSupported)
        else { return nil }
        guard selection.decidedBy == .documentOrder else { return selection }
        var measured: [String: Double] = [:]
        for group in selection.ranking {
            guard let rendition = audioRenditions.first(where: { $0.groupID == group && $0.uri != nil }),
                let uri = rendition.uri
            else { continue }
            let url = try HLSURIResolver.resolve(uri, against: playlistURL)
            let parsed = try HLSParser(options: .init(playlistURL: url)).parse(try await load(url))
            if case .media(let media) = parsed.playlist, let bitrate = media.averageBitrateFromByteRanges {
                measured[group] = bitrate
            }
        }
        return rankAudio(preferredLanguages: preferredLanguages, measured: measured, isSupported: isSupported)
    }

    func rankAudio(
        preferredLanguages: [String], measured: [String: Double], isSupported: (String) -> Bool = { _ in true }
    ) -> AudioSelection? {
        let allWithURI = audioRenditions.filter { $0.uri != nil }
        let refused = Set(
            allWithURI.map(\.groupID).filter { group in
                variants.contains {
                    $0.audioGroup == group && $0.codecs.filter(HLSCodec.isAudio).contains { !isSupported($0) }
                }
            })
        let withURI = allWithURI.filter { !refused.contains($0.groupID) }
        guard !withURI.isEmpty else {
            guard allWithURI.isEmpty else { return nil }
            guard
                let best = variants.filter({ $0.codecs.allSatisfy(isSupported) }).enumerated().max(by: { lhs, rhs in
                    lhs.element.bandwidth != rhs.element.bandwidth
                        ? lhs.element.bandwidth < rhs.element.bandwidth : lhs.offset > rhs.offset
                })?.element
            else { return nil }
            return AudioSelection(
                choice: .variant(best), groupID: nil, decidedBy: .muxed, ranking: [], evidence: [],
                explanation: "No audio rendition has its own URI, so the audio is muxed into the variants: "
                    + "the highest-BANDWIDTH variant (\(best.bandwidth) bit/s) carries the best audio.")
        }
        var order: [String] = []
        for rendition in withURI where !order.contains(rendition.groupID) { order.append(rendition.groupID) }
        var evidence = order.map { evidenceFor(group: $0, measured: measured[$0]) }
        let deltas = pairedDeltas()
        for index in evidence.indices { evidence[index].pairedBandwidthDelta = deltas[evidence[index].groupID] }

        // Bit-rate evidence counts only when every group has the same kind.
        let bitrateRule: (AudioSelection.Rule, (AudioGroupEvidence) -> Double)?
        if measured.count == evidence.count, !measured.isEmpty {
            bitrateRule = (.measuredBitrate, { $0.measuredBitrate ?? 0 })
        } else if evidence.allSatisfy({ $0.pairedBandwidthDelta != nil }) {
            bitrateRule = (.pairedBandwidth, { Double($0.pairedBandwidthDelta ?? 0) })
        } else if evidence.allSatisfy({ $0.audioOnlyVariantBandwidth != nil }) {
            bitrateRule = (.audioOnlyBandwidth, { Double($0.audioOnlyVariantBandwidth ?? 0) })
        } else if evidence.allSatisfy({ $0.renditionBandwidth != nil }) {
            bitrateRule = (.renditionBandwidth, { Double($0.renditionBandwidth ?? 0) })
        } else {
            bitrateRule = nil
        }
        var criteria: [(AudioSelection.Rule, (AudioGroupEvidence) -> Double)] = []
        if let bitrateRule { criteria.append(bitrateRule) }
        criteria += [
            (.channels, { Double($0.channels ?? -1) }),
            (.codecTier, { Double($0.codecTier) }),
            (.referencingVariantBandwidth, { Double($0.bestReferencingVariantBandwidth ?? 0) }),
        ]
        let ranked = evidence.enumerated().sorted { lhs, rhs in
            for (_, key) in criteria where key(lhs.element) != key(rhs.element) {
                return key(lhs.element) > key(rhs.element)
            }
            return lhs.offset < rhs.offset
        }.map(\.element)
        guard let best = ranked.first else { return nil }

        var rule = AudioSelection.Rule.onlyCandidate
        if ranked.count > 1 {
            rule = criteria.first { $0.1(ranked[0]) != $0.1(ranked[1]) }?.0 ?? .documentOrder
        }
        let renditions = withURI.filter { $0.groupID == best.groupID }
        guard let rendition = Self.preferred(renditions, languages: preferredLanguages) else { return nil }
        return AudioSelection(
            choice: .rendition(rendition), groupID: best.groupID, decidedBy: rule, ranking: ranked.map(\.groupID),
            evidence: ranked, explanation: Self.explain(rule, ranked))
    }

    func evidenceFor(group: String, measured: Double?) -> AudioGroupEvidence {
        let referencing = variants.filter { $0.audioGroup == group }
        let codecs = Set(referencing.flatMap(\.codecs).filter(HLSCodec.isAudio)).sorted()
        let groupRenditions = audioRenditions.filter { $0.groupID == group }
        let audioOnly = referencing.filter(\.isAudioOnly).map { $0.averageBandwidth ?? $0.bandwidth }.max()
        return AudioGroupEvidence(
            groupID: group, referencingVariantCount: referencing.count, codecs: codecs,
            codecTier: codecs.map(HLSCodec.audioTier).max() ?? -1,
            channels: groupRenditions.compactMap(\.channelCount).max(),
            audioOnlyVariantBandwidth: audioOnly,
            renditionBandwidth: groupRenditions.compactMap { $0.attributes.decimalInteger("BANDWIDTH") }.max(),
            bestReferencingVariantBandwidth: referencing.map(\.bandwidth).max(),
            pairedBandwidthDelta: nil, measuredBitrate: measured)
    }

    /// For each video listed with several audio groups, how much BANDWIDTH each group adds over
    /// the leanest; per group, the largest such difference.
    func pairedDeltas() -> [String: Int64] {
        var byVideo: [String: [(group: String, bandwidth: UInt64)]] = [:]
        for variant in variants {
            guard let group = variant.audioGroup else { continue }
            byVideo[variant.uri, default: []].append((group, variant.bandwidth))
        }
        var deltas: [String: Int64] = [:]
        for entries in byVideo.values where Set(entries.map(\.group)).count > 1 {
            guard let leanest = entries.map(\.bandwidth).min() else { continue }
            for entry in entries {
                let delta = Int64(clamping: entry.bandwidth) - Int64(clamping: leanest)
                deltas[entry.group] = max(deltas[entry.group] ?? .min, delta)
            }
        }
        return deltas
    }

    /// The rendition a player picks among `renditions` (one group's alternatives) by RFC 8216's
    /// rules (§4.3.4.1): one whose language is one of `preferredLanguages` (the earliest such
    /// language winning) when it may be chosen automatically (`AUTOSELECT=YES`, or `DEFAULT=YES`,
    /// which implies it); otherwise the `DEFAULT=YES` one; otherwise an `AUTOSELECT=YES` one;
    /// otherwise the first. A rendition with `AUTOSELECT=NO` is chosen only as the default or
    /// the first, never for its language.
    ///
    /// Languages compare as RFC 5646 tags, without regard to case, by RFC 4647's lookup (§3.4):
    /// a rendition whose tag is the learner's, or the learner's with subtags dropped from the
    /// end (`es-ES` finds `es`), or more specific than it (`es` finds `es-MX`), matches first;
    /// then one of the same primary language, as `primaryLanguage` names it (so that `spa`, as
    /// many packagers write it, matches `es-ES` when it maps both to one code). Tags whose
    /// scripts differ (`zh-Hans`, `zh-Hant`) never match.
    ///
    /// - Parameters:
    ///   - renditions: One group's renditions.
    ///   - preferredLanguages: The learner's language tags, most preferred first.
    ///   - primaryLanguage: A tag's primary language in one form (ISO 639-2/T, say), or `nil`;
    ///     by default the primary subtag in lower case.
    /// - Complexity: O(*r* · *l*) for *r* renditions and *l* languages.
    public static func preferredRendition(
        among renditions: [HLSRendition], preferredLanguages: [String],
        primaryLanguage: (String) -> String? = {
            $0.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).first.map(String.init)
        }
    ) -> HLSRendition? {
        preferred(renditions, languages: preferredLanguages, primaryLanguage: primaryLanguage)
    }

    static func preferred(
        _ renditions: [HLSRendition], languages: [String],
        primaryLanguage: (String) -> String? = { LanguageTag($0).primary }
    ) -> HLSRendition? {
        func languageRank(_ rendition: HLSRendition) -> Int {
            guard rendition.isAutoselect || rendition.isDefault, let language = rendition.language else {
                return Int.max
            }
            let offered = LanguageTag(language)
            for (index, preferred) in languages.enumerated() {
                let wanted = LanguageTag(preferred)
                if let a = offered.script, let b = wanted.script, a != b { continue }
                if offered.matchesByLookup(wanted) { return 2 * index }
                if let a = primaryLanguage(language), let b = primaryLanguage(preferred), a == b {
                    return 2 * index + 1
                }
            }
            return Int.max
        }
        return renditions.enumerated().min { lhs, rhs in
            let a = lhs.element
            let b = rhs.element
            if languageRank(a) != languageRank(b) { return languageRank(a) < languageRank(b) }
            if a.isDefault != b.isDefault { return a.isDefault }
            if a.isAutoselect != b.isAutoselect { return a.isAutoselect }
            return lhs.offset < rhs.offset
        }?.element
    }

    static func explain(_ rule: AudioSelection.Rule, _ ranked: [AudioGroupEvidence]) -> String {
        guard let best = ranked.first else { return "" }
        let runnerUp = ranked.count > 1 ? ranked[1] : nil
        let other = runnerUp.map { "'\($0.groupID)'" } ?? "none"
        switch rule {
        case .onlyCandidate:
            return "'\(best.groupID)' is the only audio group with its own media playlist."
        case .pairedBandwidth:
            return "'\(best.groupID)' adds \(best.pairedBandwidthDelta ?? 0) bit/s to the same video, "
                + "against \(runnerUp?.pairedBandwidthDelta ?? 0) for \(other): a higher audio bit rate."
        case .audioOnlyBandwidth:
            return "'\(best.groupID)' has an audio-only variant of \(best.audioOnlyVariantBandwidth ?? 0) bit/s, "
                + "against \(runnerUp?.audioOnlyVariantBandwidth ?? 0) for \(other)."
        case .renditionBandwidth:
            return
                "'\(best.groupID)' declares \(best.renditionBandwidth ?? 0) bit/s, against \(runnerUp?.renditionBandwidth ?? 0) for \(other)."
        case .measuredBitrate:
            return
                "'\(best.groupID)' measures \(AudioSelection.wholeNumber(best.measuredBitrate)) bit/s from its byte ranges, "
                + "against \(AudioSelection.wholeNumber(runnerUp?.measuredBitrate)) for \(other)."
        case .channels:
            return
                "'\(best.groupID)' has \(best.channels ?? 0) channels, against \(runnerUp?.channels.map(String.init) ?? "none") for \(other)."
        case .codecTier:
            return "'\(best.groupID)' uses \(best.codecs.joined(separator: ", ")), a better codec than \(other)."
        case .referencingVariantBandwidth:
            return "No bit rate, channel or codec evidence separates the groups; '\(best.groupID)' plays with the "
                + "highest-BANDWIDTH variant (\(best.bestReferencingVariantBandwidth ?? 0) bit/s)."
        case .documentOrder:
            return "Nothing in the playlist separates '\(best.groupID)' from \(other); it is listed first."
        case .muxed:
            return "The audio is muxed into the variants."
        }
    }
}

extension AudioSelection {
    /// A bit rate as a whole number for a sentence: rounded when it fits in an `Int`, written
    /// as a decimal otherwise (a hostile playlist can measure any `Double`).
    static func wholeNumber(_ value: Double?) -> String {
        guard let value else { return "0" }
        guard value.isFinite, abs(value) < 9.2e18 else { return "\(value)" }
        return String(Int(value.rounded()))
    }
}

extension HLSMediaPlaylist {
    /// The average bit rate from byte ranges over durations, in bits per second; `nil` when a
    /// segment has no byte range, or the durations add up to no time (or to more than a finite
    /// number can hold), or the rate is not a finite number.
    ///
    /// Ranges and durations come from the server: the sum is kept in floating point, so any
    /// lengths add up without wrapping, and a hostile playlist gives `nil`, never a trap.
    ///
    /// - Complexity: O(*n*).
    public var averageBitrateFromByteRanges: Double? {
        var bytes = 0.0
        var seconds = 0.0
        for segment in segments {
            guard let range = segment.byteRange else { return nil }
            bytes += Double(range.length)
            seconds += segment.duration
        }
        guard seconds > 0, seconds.isFinite else { return nil }
        let rate = bytes * 8 / seconds
        return rate.isFinite ? rate : nil
    }
}

/// An RFC 5646 language tag's subtags, in lower case, as language selection compares them.
struct LanguageTag {
    /// The subtags, `_` read as `-`.
    let subtags: [String]

    init(_ tag: String) {
        subtags = tag.lowercased().split(whereSeparator: { $0 == "-" || $0 == "_" }).map(String.init)
    }

    /// The primary language subtag.
    var primary: String? { subtags.first }

    /// The script subtag (four letters, §2.2.3), if any.
    var script: String? {
        subtags.dropFirst().first { $0.count == 4 && $0.allSatisfy(\.isLetter) }
    }

    /// Whether this tag is `other`, or `other` with subtags dropped from its end (RFC 4647
    /// §3.4's lookup), or more specific than `other`.
    func matchesByLookup(_ other: LanguageTag) -> Bool {
        guard !subtags.isEmpty, !other.subtags.isEmpty else { return false }
        let shorter = min(subtags.count, other.subtags.count)
        return Array(subtags.prefix(shorter)) == Array(other.subtags.prefix(shorter))
    }
}
