// The conversation with an instruct model (one whose files carry a chat template): the system
// prompt, the turns so far (list "Conversation") and the message being written, which is the Prompt
// box. The page renders them with the model's own template (model.applyChatTemplate, as
// transformers' apply_chat_template) and reads the rendered text with its special tokens, so every
// view (tokens, attention, next token, Layers, heads off) works over the whole conversation, the
// template's own tokens included. The text of every turn goes into the page as text, never HTML.
import { clear, el } from './dom.mjs';

export class Conversation {
  #root;
  #system;
  #list;
  #newButton;
  #turns = []; // finished turns: {role: 'user' | 'assistant', content}
  #onChange;

  // elements: root (shown only for a model with a template), system (textarea "System prompt"),
  // list (ol "Conversation"), newButton ("New conversation"). onChange(): the conversation the
  // views show changed (system prompt edited, or the turns cleared).
  constructor({ root, system, list, newButton, onChange }) {
    this.#root = root;
    this.#system = system;
    this.#list = list;
    this.#newButton = newButton;
    this.#onChange = onChange;
    system.addEventListener('input', () => onChange());
    newButton.addEventListener('click', () => {
      this.#turns = [];
      this.#draw();
      onChange();
    });
    this.#draw();
  }

  get shown() {
    return !this.#root.hidden;
  }

  // Shown for a model with a chat template; another model starts a new conversation.
  show(on) {
    this.#root.hidden = !on;
    this.#turns = [];
    this.#draw();
  }

  setDisabled(on) {
    this.#system.readOnly = on;
    this.#newButton.disabled = on || !this.#turns.length;
  }

  // The messages as a chat template reads them: the system prompt (when written), the turns, and
  // `message` as the user's next turn (when not empty).
  messages(message = '') {
    const system = this.#system.value.trim();
    return [
      ...(system ? [{ role: 'system', content: system }] : []),
      ...this.#turns,
      ...(message ? [{ role: 'user', content: message }] : []),
    ];
  }

  // The conversation as the model reads it: with a message, the template's prompt for the
  // assistant's reply follows it (add_generation_prompt); without one, the turns so far.
  render(model, message = '') {
    return model.applyChatTemplate(this.messages(message), { addGenerationPrompt: message !== '' });
  }

  // A user's message and the model's reply become turns of the conversation.
  add(message, reply) {
    this.#turns.push({ role: 'user', content: message }, { role: 'assistant', content: reply });
    this.#draw();
  }

  // Takes the last exchange back: its message (to be sent again), or null when there is none.
  takeLast() {
    if (!this.#turns.length) return null;
    const [message] = this.#turns.splice(-2, 2);
    this.#draw();
    return message.content;
  }

  #draw() {
    clear(this.#list);
    for (const turn of this.#turns) {
      const who = turn.role === 'user' ? 'You' : 'Model';
      this.#list.append(
        el(
          'li',
          { className: `turn turn-${turn.role}` },
          el('span', { className: 'turn-role' }, who),
          el('span', { className: 'turn-text' }, turn.content),
        ),
      );
    }
    this.#list.hidden = !this.#turns.length;
    this.#newButton.disabled = !this.#turns.length;
  }
}
