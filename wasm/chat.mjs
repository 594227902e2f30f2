// A model's chat template, rendered by the chat module (glassbox-chat.mjs/.wasm, chat_bindings.cpp):
// loaded at a model's first applyChatTemplate or chat, in the thread the engine runs in, so that
// the engine's module, which every page downloads, carries none of it.
import { errorClasses, InvalidArgumentError } from './errors.mjs';
import { makeModule } from './wasm-module.mjs';

let modulePromise = null; // one instance per thread, shared by every model of it
let providedFactory = null; // the module's factory, where import() is not allowed (useChatFactory)

// A service worker may not use import(): its entry imports the module statically and hands its
// factory here.
export function useChatFactory(create) {
  providedFactory = create;
}

// The module, its .wasm beside the glue (where a bundler puts it: its URL is written out for
// bundlers to see) or in wasmPaths (the engine's, resolved: a directory URL, or a path in Node;
// null: beside the glue).
function loadModule(wasmPaths) {
  modulePromise ??= (async () => {
    const create = providedFactory ?? (await import('./glassbox-chat.mjs')).default;
    return makeModule(create, {
      file: 'glassbox-chat.wasm',
      glue: 'glassbox-chat.mjs',
      label: 'the chat module glassbox-chat.wasm',
      needs: 'ChatTemplate',
      bundled: new URL('./glassbox-chat.wasm', import.meta.url),
      wasmPaths,
      options: { errors: errorClasses },
    });
  })();
  modulePromise.catch(() => {
    modulePromise = null;
  }); // reported to the caller; tried again next time
  return modulePromise;
}

// Whether a model's files give a chat template: chat_template.jinja, or tokenizer_config.json with
// a "chat_template" (a tokenizer_config.json that is not JSON counts too: what is wrong with it is
// said where the template is used).
export function hasChatTemplate({ chatTemplate, tokenizerConfig }) {
  if (typeof chatTemplate === 'string') return true;
  if (typeof tokenizerConfig !== 'string') return false;
  try {
    const config = JSON.parse(tokenizerConfig.charCodeAt(0) === 0xfeff ? tokenizerConfig.slice(1) : tokenizerConfig);
    return config !== null && typeof config === 'object' && config.chat_template != null;
  } catch {
    return true;
  }
}

// The chat template of a model's files ({chatTemplate, tokenizerConfig}: texts, or undefined),
// parsed at the first render; wasmPaths: where the engine's .wasm files are (null: beside the glue).
export class ChatTemplate {
  #files;
  #wasmPaths;
  #handle = null;

  constructor(files, wasmPaths) {
    this.#files = files;
    this.#wasmPaths = wasmPaths;
  }

  // messagesJson: the conversation as JSON text; options {addGenerationPrompt, date, templateVars
  // (a JSON object's text, or '')} -> the rendered text.
  async render(messagesJson, options) {
    if (!this.#handle) {
      const module = await loadModule(this.#wasmPaths);
      const { chatTemplate = null, tokenizerConfig = null } = this.#files;
      this.#handle = module.ChatTemplate.create(chatTemplate, tokenizerConfig);
      if (!this.#handle)
        throw new InvalidArgumentError(
          'this model has no chat template (no chat_template.jinja, and no chat_template in tokenizer_config.json)',
        );
    }
    return this.#handle.render(messagesJson, options);
  }

  dispose() {
    this.#handle?.delete();
    this.#handle = null;
  }
}
