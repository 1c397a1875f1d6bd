import Foundation

/// The partial files of a session's interrupted downloads that can still be resumed (see
/// ``MoyaError/resumeData``), and the check that resume data names one of them.
///
/// A session holds one; closing it (when the session shuts down) deletes the files and keeps no
/// new ones.
final class KeptPartials: Sendable {
    /// The files kept, and whether no more are taken.
    private struct State {
        var files: Set<URL> = []
        var isClosed = false
    }

    private let state = Protected(State())

    /// Keeps the partial file of an interrupted download at `url` until it is resumed or the
    /// session shuts down.
    ///
    /// - Returns: `false` once closed: the file is deleted instead.
    func keep(_ url: URL) -> Bool {
        let kept = state.withLock { state in
            guard !state.isClosed else { return false }
            state.files.insert(url)
            return true
        }
        if !kept {
            PartialFile.discard(url)
        }
        return kept
    }

    /// Stops keeping the partial file at `url`: it was resumed, or replaced. `deleting` deletes
    /// it too.
    func release(_ url: URL, deleting: Bool) {
        state.withLock { _ = $0.files.remove(url) }
        if deleting {
            PartialFile.discard(url)
        }
    }

    /// Deletes the partial files no one resumed; with `closing`, keeps no new ones afterwards.
    func deleteAll(closing: Bool) {
        let files = state.withLock { state in
            defer { state.files.removeAll() }
            if closing { state.isClosed = true }
            return state.files
        }
        for file in files {
            PartialFile.discard(file)
        }
    }

    /// The partial file that `resumeData` names, checked: one kept here, in `directory` (the
    /// folder downloads are written to now), of the recorded length.
    ///
    /// - Throws: ``DownloadResumeError/invalidResumeData``.
    func resumePoint(from resumeData: Data, in directory: URL?) throws(DownloadResumeError) -> ResumePoint {
        guard let resume = DownloadResume.decode(resumeData),
            let directory,
            let file = resume.validated(in: directory),
            state.withLock({ $0.files.contains(file) })
        else {
            throw .invalidResumeData
        }
        return ResumePoint(state: resume, file: file)
    }
}
