import Foundation

extension Session {
    /// Keeps the partial file of an interrupted download at `url` until it is resumed or the
    /// session shuts down.
    ///
    /// - Returns: `false` when the session has shut down: the file is deleted instead.
    func keepPartial(_ url: URL) -> Bool {
        let kept = keptPartials.withLock { files in
            guard !isShutDown.current else { return false }
            files.insert(url)
            return true
        }
        if !kept {
            PartialFile.discard(url)
        }
        return kept
    }

    /// Stops keeping the partial file at `url`: it was resumed, or replaced. `deleting` deletes
    /// it too.
    func releasePartial(_ url: URL, deleting: Bool) {
        keptPartials.withLock { _ = $0.remove(url) }
        if deleting {
            PartialFile.discard(url)
        }
    }

    /// Deletes the partial files no one resumed.
    func deleteKeptPartials() {
        let files = keptPartials.withLock { files in
            defer { files.removeAll() }
            return files
        }
        for file in files {
            PartialFile.discard(file)
        }
    }

    /// The partial file that `resumeData` names, checked: one this session kept, in the folder
    /// its downloads are written to now, of the recorded length.
    ///
    /// - Throws: ``DownloadResumeError/invalidResumeData``.
    func resumePoint(from resumeData: Data) throws(DownloadResumeError) -> ResumePoint {
        guard let resume = DownloadResume.decode(resumeData),
            let directory = downloadFolder.current,
            let file = resume.validated(in: directory),
            keptPartials.withLock({ $0.contains(file) })
        else {
            throw .invalidResumeData
        }
        return ResumePoint(state: resume, file: file)
    }
}
