import Foundation
import HLS
import MediaContainers

/// Turns the parts of a lesson into clear bytes: AES-128 with the keys fetched up front, any
/// other method with the app's decryptor, then a check that the result is media.
struct LessonDecryption: Sendable {
    let keys: LessonKeys
    let decryptor: (any SegmentDecryptor)?
    let renditions: [SegmentRemuxer.Rendition]

    /// The clear bytes of media part `index`: decrypted (``decrypt(_:part:index:)``), then
    /// checked to be media (a transport stream, ISO base media or packed audio).
    ///
    /// - Throws: ``DownloadError`` of kind ``DownloadError/Kind/decryptionFailed(reason:)``
    ///   naming the part, or ``DownloadError/Kind/encrypted(method:)`` when nothing can decrypt
    ///   it.
    /// - Complexity: O(n) in the part's size.
    func clear(_ data: Data, part: LessonPlan.Part, index: Int) async throws -> Data {
        guard part.decryption != nil else { return data }
        let clear = try await decrypt(data, part: part, index: index)
        do {
            _ = try SegmentFormat.detect(clear.prefix(512))
        } catch {
            let found: String
            if case .notMedia(let what) = error.kind { found = what } else { found = "\(error)" }
            throw DownloadError(
                .decryptionFailed(reason: "the decrypted bytes are not media but \(found)"), part: index, url: part.url)
        }
        return clear
    }

    /// The bytes of part `index` decrypted, whatever they hold (a media segment, a WebVTT
    /// segment): with the built-in AES-128, else the app's decryptor; clear parts as they are.
    ///
    /// - Throws: As ``clear(_:part:index:)``, without the media check.
    /// - Complexity: O(n) in the part's size.
    func decrypt(_ data: Data, part: LessonPlan.Part, index: Int) async throws -> Data {
        guard let decryption = part.decryption else { return data }
        let clear: Data
        if decryption.isBuiltIn, let url = decryption.keyURL, let cipher = keys.ciphers[url] {
            do {
                clear = try CBCDecryptor.decrypt(data, cipher: cipher, iv: decryption.initializationVector)
            } catch {
                let reason =
                    switch error {
                    case .length(let count): "\(count) bytes of AES-128-CBC ciphertext, not a multiple of 16"
                    case .padding: "the decrypted bytes end without PKCS#7 padding (a wrong key or IV?)"
                    }
                throw DownloadError(.decryptionFailed(reason: reason), part: index, url: part.url)
            }
        } else if let decryptor {
            let rendition = part.rendition < renditions.count ? renditions[part.rendition] : nil
            let context = SegmentDecryptionContext(
                key: decryption.key, keyURL: decryption.keyURL, initializationVector: decryption.initializationVector,
                isInitializationVectorDerived: decryption.isInitializationVectorDerived,
                mediaSequence: part.mediaSequence, rendition: part.rendition, renditionLanguage: rendition?.language,
                renditionName: rendition?.name, isInitializationSection: part.role == .initialization, url: part.url)
            do {
                clear = try await decryptor.decrypt(data, context: context)
            } catch let error as DownloadError {
                throw error
            } catch is CancellationError {
                throw CancellationError()
            } catch {
                throw DownloadError(
                    .decryptionFailed(reason: "the decryptor failed: \(error)"), part: index, url: part.url)
            }
        } else {
            throw DownloadError(.encrypted(method: decryption.key.method), part: index, url: part.url)
        }
        return clear
    }
}
