import { randomBytes } from 'node:crypto';
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type Docker from 'dockerode';
import { MACHINE_LABEL, dockerVolumeName } from './container-spec';

/** Marks the short-lived containers that give Docker's archive endpoints a volume to read or fill. */
export const VOLUME_COPY_LABEL = 'rigmarket.volume_copy';
/** Where the helper container mounts the volume. */
const MOUNT = '/rigmarket-volume';

/** An image this Docker Engine already has (the helper is created from it, never started, so any will do). */
async function localImage(docker: Docker): Promise<string> {
  const images = await docker.listImages();
  const tag = images.flatMap((i) => i.RepoTags ?? []).find((t) => t !== '<none>:<none>');
  if (!tag) throw new Error('This host has no local image to mount the volume with');
  return tag;
}

/**
 * A container created, never started, that mounts the volume: Docker reads and extracts archives of a
 * stopped container's mounts too, so the volume's files travel through GET/PUT /containers/{id}/archive
 * without running anything. Labeled with the machine (removed with the machine's containers).
 */
async function volumeHelper(docker: Docker, machineId: number, volumeId: number): Promise<Docker.Container> {
  return docker.createContainer({
    name: `rigmarket-volume-copy-${volumeId}-${randomBytes(4).toString('hex')}`,
    Image: await localImage(docker),
    Cmd: ['true'],
    NetworkDisabled: true,
    Labels: { [MACHINE_LABEL]: String(machineId), [VOLUME_COPY_LABEL]: String(volumeId) },
    HostConfig: { Mounts: [{ Type: 'volume', Source: dockerVolumeName(volumeId), Target: MOUNT }] },
  });
}

const removeHelper = (helper: Docker.Container): Promise<void> =>
  helper.remove({ force: true }).then(
    () => undefined,
    () => undefined,
  );

/** A tar of the volume's contents (entries relative to its root); the helper goes once the tar ends. */
export async function readVolumeArchive(
  docker: Docker,
  machineId: number,
  volumeId: number,
  signal: AbortSignal,
): Promise<{ tar: Readable }> {
  const helper = await volumeHelper(docker, machineId, volumeId);
  try {
    const tar = (await helper.getArchive({ path: `${MOUNT}/.`, abortSignal: signal })) as unknown as Readable;
    let removed = false;
    const remove = () => {
      if (removed) return;
      removed = true;
      void removeHelper(helper);
    };
    tar.once('end', remove);
    tar.once('close', remove);
    tar.once('error', remove);
    return { tar };
  } catch (error) {
    await removeHelper(helper);
    throw error;
  }
}

/** An extract into the volume's root of the tar written to `sink`; the helper goes once the extract settles. */
export async function writeVolumeArchive(
  docker: Docker,
  machineId: number,
  volumeId: number,
  signal: AbortSignal,
): Promise<{ sink: Writable; done: Promise<void> }> {
  const helper = await volumeHelper(docker, machineId, volumeId);
  const sink = new PassThrough({ highWaterMark: 1024 * 1024 });
  const done = Promise.resolve(helper.putArchive(sink, { path: MOUNT, abortSignal: signal })).then(
    () => undefined,
  );
  void done.then(
    () => removeHelper(helper),
    () => removeHelper(helper),
  );
  return { sink, done };
}
