import Downloads
import Foundation

/// The journal keeps a request's state in the fields earlier versions wrote (`isSubmitted`,
/// `isStopped`, `resumeData`, `failure`), so that journals of either read the same.
extension BackgroundTransfers.Handed: Codable {
    private enum CodingKeys: String, CodingKey {
        case label, url, range, expectedBytes, attempts, resumeData, failure, isSubmitted, isStopped, network
    }

    init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        label = try container.decode(String.self, forKey: .label)
        url = try container.decode(URL.self, forKey: .url)
        range = try container.decodeIfPresent(ByteRange.self, forKey: .range)
        expectedBytes = try container.decodeIfPresent(UInt64.self, forKey: .expectedBytes)
        attempts = try container.decode(Int.self, forKey: .attempts)
        network = try container.decodeIfPresent(DownloadRequirements.Network.self, forKey: .network)
        let resumeData = try container.decodeIfPresent(Data.self, forKey: .resumeData)
        if let failure = try container.decodeIfPresent(DownloadError.Category.self, forKey: .failure) {
            state = .givenUp(failure)
        } else if try container.decodeIfPresent(Bool.self, forKey: .isStopped) == true {
            state = .stopped(resumeData: resumeData)
        } else if try container.decodeIfPresent(Bool.self, forKey: .isSubmitted) == true {
            state = .submitted
        } else {
            state = .unsubmitted(resumeData: resumeData)
        }
    }

    func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(label, forKey: .label)
        try container.encode(url, forKey: .url)
        try container.encodeIfPresent(range, forKey: .range)
        try container.encodeIfPresent(expectedBytes, forKey: .expectedBytes)
        try container.encode(attempts, forKey: .attempts)
        try container.encodeIfPresent(network, forKey: .network)
        try container.encodeIfPresent(resumeData, forKey: .resumeData)
        try container.encodeIfPresent(failure, forKey: .failure)
        try container.encode(state == .submitted, forKey: .isSubmitted)
        if case .stopped = state {
            try container.encode(true, forKey: .isStopped)
        } else {
            try container.encode(false, forKey: .isStopped)
        }
    }
}
